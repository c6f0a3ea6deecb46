/* daemon/udp.h -- being written */
