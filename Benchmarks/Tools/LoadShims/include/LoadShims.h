// What DaemonLoad's WebSocket clients need from Linux that the Glibc module does not export:
// epoll (the clients run thousands of sockets on one thread).
#ifndef LOAD_SHIMS_H
#define LOAD_SHIMS_H
#ifdef __linux__
#include <sys/epoll.h>
#endif
#endif
