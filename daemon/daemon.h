/* daemon/daemon.h -- being written */
