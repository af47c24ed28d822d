#ifndef WALLET_CMICROHTTPD_SHIM_H
#define WALLET_CMICROHTTPD_SHIM_H
// GNU libmicrohttpd for ReferenceParties' loopback server. MHD_start_daemon and
// MHD_get_daemon_info are variadic, which Swift cannot call: these wrappers fix
// the options the server uses.
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

typedef void *(*wallet_mhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

// Starts a daemon on `address` with its own polling thread (epoll or poll, whichever
// the platform has best) and suspend/resume enabled, so that the access handler can
// park a connection while an asynchronous handler works. `strict_for_client` = 1
// refuses requests that bend HTTP/1.1 (spaces in the target, bare LF, ...).
static inline struct MHD_Daemon *wallet_mhd_start(const struct sockaddr_in *address,
                                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                                  wallet_mhd_uri_log_callback uri_log, void *uri_log_cls,
                                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                                  unsigned int connection_limit,
                                                  unsigned int connection_timeout_seconds) {
    return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME,
                            0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
                            MHD_OPTION_END);
}

// The port the daemon is bound to (0 when it cannot say).
static inline uint16_t wallet_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

#endif
