/* daemon/platform.h -- being written */
