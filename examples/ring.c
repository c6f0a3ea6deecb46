/* examples/ring.c -- being written */
int main(void) { return 0; }
