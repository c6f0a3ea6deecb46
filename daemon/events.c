/*
 * events.c -- who reacts to what, in which order (events.h).
 *
 * The orders below are the daemon's contract between modules; change
 * them only knowingly:
 *
 *   host down:  route (HOST_DOWN to local tasks, then notifications)
 *               -> admin, spawn, measure (requests and measurements
               waiting on the host fail)
 *               -> group (joins and groups spanning it fail)
 *               -> coll (early collective data from it dropped).
 *   host up:    route (HOST_ADD notifications) -> group (names owned
 *               by it may be taken over) -> measure (a quick measurement of
 it).
 *   group failed: coll (its instances from g->fail_from on fail).
 *   task exit:  route tells the other daemons (TASK_EXIT), then as
 *   task gone:  route (TASK_EXIT to local tasks, its notifications
 *               dropped, notifications about it fired) -> group.
 *   joined:     task socket opened (stop with exit 1 if it cannot).
 *   stop:       no new tasks, task exits announced, HOST_DOWN of this
 *               daemon to the others (host_leave), then the loop lingers
 *               until the transport is idle (collsd.c's cron).
 *
 * May call every module; called by route, host, join, admin and (through
 * task_ops, which collsd.c installs) task.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <event2/event.h>

#include "daemon/admin.h"
#include "daemon/access.h"
#include "daemon/coll.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "daemon/task.h"

void
events_host_up(struct daemon *d, int hid)
{
    route_host_add(d, hid);
    group_host_up(d, hid);
    measure_host_up(d, hid);
}

void
events_host_down(struct daemon *d, int hid, uint32_t inc)
{
    route_host_down(d, hid, inc);
    admin_host_down(d, hid);
    spawn_host_down(d, hid);
    measure_host_down(d, hid);
    if (d->gs == NULL)
        return;
    group_host_down(d, hid);
    coll_host_down(d, hid);
}

void
events_task_exit(struct daemon *d, uint32_t tid, int status)
{
    route_task_exit(d, tid, status);
    events_task_gone(d, tid, status);
}

void
events_task_gone(struct daemon *d, uint32_t tid, int status)
{
    route_task_gone(d, tid, status);
    group_task_exit(d, tid);
}

void
events_group_failed(struct daemon *d, struct group *g)
{
    coll_group_failed(d, g);
}

void
events_joined(struct daemon *d)
{
    if (access_listen(d) != 0)
        events_stop(d, 1, 0);
}

void
events_rejoining(struct daemon *d)
{
    access_unlisten(d);
}

void
events_stop(struct daemon *d, int exit_code, uint64_t linger_us)
{
    if (d->stopping) {
        if (linger_us == 0)
            event_base_loopbreak(d->base);
        return;
    }
    d->exit_code = exit_code;
    d->stopping = 1;
    d->stop_at_us = platform_now_us() + linger_us;
    if (linger_us == 0) {
        event_base_loopbreak(d->base);
        return;
    }
    /* Leave cleanly: no new tasks, exits announced, then tell the others
       we are gone so they need not wait for --dead-after. */
    access_unlisten(d);
    task_close_all(d, 1);
    host_leave(d);
    net_kick(d);
}
