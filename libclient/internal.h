/* libclient/internal.h -- being written */
