/*
 * The kernel's part of a proximity session over the TCP test carrier, without the SDK:
 * what `wallet-bench proximity --carrier tcp` cannot go below however its threads are
 * arranged (docs/performance.md, 2026-12-05, second session).
 *
 * One thread does a session's socket calls in order, so no wake-up between threads is
 * counted: a listener on 127.0.0.1, a connect, the accept, TCP_NODELAY on both ends,
 * the reader's request frame (204 bytes with its length), the holder's response frame
 * (51,704 bytes, the benchmark's mDL with a 50 KB portrait), both read whole, both ends
 * shut down and closed, the listener closed. Prints the mean over 2,000 sessions after
 * 100 to warm up.
 *
 *     cc -O2 -o /tmp/loopback Benchmarks/loopback/loopback.c && /tmp/loopback
 */
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void check(int ok, const char *what) {
    if (!ok) { perror(what); exit(1); }
}

static void read_whole(int fd, char *buffer, size_t count) {
    size_t have = 0;
    while (have < count) {
        ssize_t n = recv(fd, buffer + have, count - have, 0);
        check(n > 0, "recv");
        have += (size_t)n;
    }
}

static void send_whole(int fd, const char *buffer, size_t count) {
    size_t sent = 0;
    while (sent < count) {
        ssize_t n = send(fd, buffer + sent, count - sent, MSG_NOSIGNAL);
        check(n > 0, "send");
        sent += (size_t)n;
    }
}

int main(void) {
    enum { warm = 100, sessions = 2000, request = 204, response = 51704 };
    static char outgoing[response], incoming[response];
    const int one = 1;
    double start = 0;
    for (int i = 0; i < warm + sessions; i++) {
        if (i == warm) start = seconds();
        struct sockaddr_in address = { .sin_family = AF_INET };
        socklen_t length = sizeof address;
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
        int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        check(listener >= 0, "socket");
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        check(bind(listener, (struct sockaddr *)&address, sizeof address) == 0, "bind");
        check(listen(listener, 128) == 0, "listen");
        check(getsockname(listener, (struct sockaddr *)&address, &length) == 0, "getsockname");
        int reader = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        check(reader >= 0 && connect(reader, (struct sockaddr *)&address, sizeof address) == 0, "connect");
        setsockopt(reader, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int holder = accept(listener, NULL, NULL);
        check(holder >= 0, "accept");
        setsockopt(holder, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        send_whole(reader, outgoing, request);
        read_whole(holder, incoming, request);
        send_whole(holder, outgoing, response);
        read_whole(reader, incoming, response);
        shutdown(holder, SHUT_RDWR);
        shutdown(reader, SHUT_RDWR);
        close(holder);
        close(reader);
        close(listener);
    }
    printf("one session's socket calls on one thread: %.1f us (mean of %d)\n",
           (seconds() - start) / sessions * 1e6, sessions);
    return 0;
}
