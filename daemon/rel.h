/* daemon/rel.h -- being written */
