#ifndef WALLET_CEPOLL_SHIM_H
#define WALLET_CEPOLL_SHIM_H
// Linux's epoll, eventfd and accept4 for the TCP carrier (MdocProximity's SocketReactor
// and SocketHandle); Glibc's Swift module leaves these out. Imported on Linux only.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// A GNU extension that <sys/socket.h> declares only under _GNU_SOURCE, which the Glibc
// module is built without; this is glibc's own prototype (since glibc 2.10).
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
