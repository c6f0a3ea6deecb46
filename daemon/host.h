/* daemon/host.h -- being written */
