/*
 * The kernel's part of a proximity session over the TCP test carrier, without the SDK:
 * what `wallet-bench proximity --carrier tcp` cannot go below however its threads are
 * arranged (docs/performance.md, 2026-12-05, second and sixth sessions).
 *
 * A session's socket calls: a listener on 127.0.0.1, a connect, the accept, TCP_NODELAY
 * on both ends, the reader's request frame (204 bytes with its length), the holder's
 * response frame (51,704 bytes, the benchmark's mDL with a 50 KB portrait), both read
 * whole, both ends shut down and closed, the listener closed. Measured two ways, each
 * the mean over 2,000 sessions after 100 to warm up:
 *   - on one thread, in order: no wake-up between threads is counted;
 *   - with the holder on a thread of its own that blocks in each call (the listener
 *     handed to it through a pipe, then accept, the request, the end of the reader's
 *     stream): the fewest wake-ups two parties on two threads can have, each going
 *     straight to the thread that waits.
 * Each session leaves a connection in TIME_WAIT for a minute; with tens of thousands of
 * them a connect searches long for a free port, so leave a minute between runs.
 *
 *     cc -O2 -pthread -o /tmp/loopback Benchmarks/loopback/loopback.c && /tmp/loopback
 */
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <pthread.h>
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

enum { warm = 100, sessions = 2000, request = 204, response = 51704 };
static const int one = 1;
static char outgoing[response];

/* A listener on an ephemeral port of 127.0.0.1; `address` is set to where it listens. */
static int make_listener(struct sockaddr_in *address) {
    socklen_t length = sizeof *address;
    *address = (struct sockaddr_in){ .sin_family = AF_INET };
    inet_pton(AF_INET, "127.0.0.1", &address->sin_addr);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check(listener >= 0, "socket");
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    check(bind(listener, (struct sockaddr *)address, sizeof *address) == 0, "bind");
    check(listen(listener, 128) == 0, "listen");
    check(getsockname(listener, (struct sockaddr *)address, &length) == 0, "getsockname");
    return listener;
}

static int connect_to(const struct sockaddr_in *address) {
    int reader = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check(reader >= 0 && connect(reader, (const struct sockaddr *)address, sizeof *address) == 0, "connect");
    setsockopt(reader, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return reader;
}

static int accept_from(int listener) {
    int holder = accept(listener, NULL, NULL);
    check(holder >= 0, "accept");
    setsockopt(holder, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return holder;
}

static double one_thread(void) {
    static char incoming[response];
    double start = 0;
    for (int i = 0; i < warm + sessions; i++) {
        if (i == warm) start = seconds();
        struct sockaddr_in address;
        int listener = make_listener(&address);
        int reader = connect_to(&address);
        int holder = accept_from(listener);
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
    return (seconds() - start) / sessions;
}

static int hand_over[2];   /* the reader's thread passes each listener (then -1, stop) to the holder's */

static void *holder_thread(void *unused) {
    static char incoming[request];
    (void)unused;
    for (;;) {
        int listener;
        check(read(hand_over[0], &listener, sizeof listener) == sizeof listener, "read");
        if (listener < 0) return NULL;
        int holder = accept_from(listener);
        read_whole(holder, incoming, request);
        send_whole(holder, outgoing, response);
        char end;
        check(recv(holder, &end, 1, 0) == 0, "end of stream");
        shutdown(holder, SHUT_RDWR);
        close(holder);
        close(listener);
    }
}

static double two_threads(void) {
    static char incoming[response];
    pthread_t holder;
    check(pipe(hand_over) == 0, "pipe");
    check(pthread_create(&holder, NULL, holder_thread, NULL) == 0, "pthread_create");
    double start = 0;
    for (int i = 0; i < warm + sessions; i++) {
        if (i == warm) start = seconds();
        struct sockaddr_in address;
        int listener = make_listener(&address);
        check(write(hand_over[1], &listener, sizeof listener) == sizeof listener, "write");
        int reader = connect_to(&address);
        send_whole(reader, outgoing, request);
        read_whole(reader, incoming, response);
        shutdown(reader, SHUT_RDWR);
        close(reader);
    }
    double elapsed = (seconds() - start) / sessions;
    int stop = -1;
    check(write(hand_over[1], &stop, sizeof stop) == sizeof stop, "write");
    pthread_join(holder, NULL);
    return elapsed;
}

int main(void) {
    printf("one session's socket calls on one thread: %.1f us (mean of %d)\n", one_thread() * 1e6, sessions);
    printf("the same with the holder on its own thread, blocking: %.1f us (mean of %d)\n", two_threads() * 1e6, sessions);
    return 0;
}
