/* daemon/collsd.c -- being written */
int main(void) { return 0; }
