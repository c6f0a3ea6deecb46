/* tests/bench/bench.h -- being written */
