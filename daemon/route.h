/* daemon/route.h -- being written */
