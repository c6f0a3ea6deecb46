/* daemon/task.h -- being written */
