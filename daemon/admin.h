/* daemon/admin.h -- being written */
