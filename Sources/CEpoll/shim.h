#ifndef WALLET_CEPOLL_SHIM_H
#define WALLET_CEPOLL_SHIM_H
// Linux's epoll and eventfd for the TCP carrier's reactor (MdocProximity's
// SocketReactor); Glibc's Swift module leaves these headers out. Imported on Linux only.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
