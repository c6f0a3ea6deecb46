/* daemon/log.h -- being written */
