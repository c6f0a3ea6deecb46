/* tools/collsctl.h -- being written */
