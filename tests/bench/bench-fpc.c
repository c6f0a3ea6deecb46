/* tests/bench/bench-fpc.c -- being written */
int main(void) { return 0; }
