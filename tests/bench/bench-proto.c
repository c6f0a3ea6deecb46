/* tests/bench/bench-proto.c -- being written */
int main(void) { return 0; }
