/* daemon/stats.h -- being written */
