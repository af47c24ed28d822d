import Foundation
import Testing
@testable import MdocProximity
import WalletRuntime

@Suite("Transports: in-memory and TCP loopback")
struct TransportTests {
    @Test("NFC data transfer: each SELECT's link replaces the one waiting, so the newest is accepted and the stale ones are closed")
    func nfcLinksKeepTheNewest() async throws {
        let listener = NFCDataTransferListener(endpoint: .nfc(maxCommandDataLength: 255, maxResponseDataLength: 256), clock: SystemClock())
        let links = (0..<3).map { _ in NFCDataTransferLink(clock: SystemClock()) }
        for link in links { listener.offer(link) }
        #expect(listener.queuedLinks == 1)
        for stale in links.dropLast() {
            await #expect(throws: ProximityError.connectionClosed) { try await stale.send([1]) }
        }
        let accepted = try await listener.accept(timeout: nil)
        #expect((accepted as? NFCDataTransferLink) === links[2])
        try await links[2].send([2])
        await listener.close()
        let late = NFCDataTransferLink(clock: SystemClock())
        listener.offer(late)
        await #expect(throws: ProximityError.connectionClosed) { try await late.send([3]) }
    }

    static func exchange(_ a: any MdocTransport, _ b: any MdocTransport) async throws {
        let sizes = [0, 1, 4096, 300_000]
        for size in sizes {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            try await a.send(message)
            #expect(try await b.receive(timeout: hangGuard) == message)
            try await b.send(message.reversed())
            #expect(try await a.receive(timeout: hangGuard) == message.reversed())
        }
    }

    @Test("an in-memory pair carries messages both ways and closes cleanly")
    func inMemory() async throws {
        let (a, b) = InMemoryTransport.makePair()
        try await Self.exchange(a, b)
        try await a.send([1, 2, 3])
        await a.close()
        #expect(try await b.receive(timeout: hangGuard) == [1, 2, 3])   // buffered before the close
        await #expect(throws: ProximityError.connectionClosed) { try await b.receive(timeout: hangGuard) }
        await #expect(throws: ProximityError.connectionClosed) { try await b.send([1]) }
    }

    @Test("receive times out with a typed error")
    func timeout() async throws {
        let (a, _) = InMemoryTransport.makePair()
        await #expect(throws: ProximityError.timeout(seconds: 0.05)) { try await a.receive(timeout: .milliseconds(50)) }
    }

    @Test("the exchange connects a reader to a listening holder; a closed listener refuses")
    func exchangeListener() async throws {
        let exchange = InMemoryTransport.Exchange()
        let listener = try await exchange.listen()
        async let accepted = listener.accept(timeout: hangGuard)
        let client = try await exchange.connect(to: listener.endpoint, timeout: nil)
        let server = try await accepted
        try await Self.exchange(client, server)
        await listener.close()
        #expect(exchange.listenerCount == 0)
        await #expect(throws: ProximityError.self) { try await exchange.connect(to: listener.endpoint, timeout: nil) }
    }

    @Test("TCP on 127.0.0.1 frames messages by length, times out, and closes cleanly")
    func tcpLoopback() async throws {
        let listener = try privateTCPListener()
        let address = try #require(listener.endpoint.tcpAddress)
        let (host, port) = (address.host, address.port)
        #expect(host == "127.0.0.1")
        async let accepted = listener.accept(timeout: hangGuard)
        let client = try await TCPTransport.connect(host: host, port: port)
        let server = try await accepted
        try await Self.exchange(client, server)
        await #expect(throws: ProximityError.timeout(seconds: 0.05)) { try await server.receive(timeout: .milliseconds(50)) }
        await client.close()
        await #expect(throws: ProximityError.connectionClosed) { try await server.receive(timeout: hangGuard) }
        await server.close()
        await listener.close()
        await #expect(throws: ProximityError.connectionClosed) { try await listener.accept(timeout: hangGuard) }
    }

    @Test("TCP frames sent at once by several tasks arrive whole, each task's in its order, after a send buffer fills")
    func tcpConcurrentSenders() async throws {
        let senders = 8, frames = 15, size = 256 * 1024
        // The receiving side takes frames of `size` at most, so that bytes of a broken
        // stream read as a length mostly fail at once.
        let listener = try privateTCPListener(maxMessageSize: size)
        let address = try #require(listener.endpoint.tcpAddress)
        async let accepted = listener.accept(timeout: hangGuard)
        let client = try await TCPTransport.connect(host: address.host, port: address.port)
        let server = try await accepted
        // 256 KiB frames fill a loopback send buffer, so writes end part-way and the rest
        // is queued; a frame is one byte, its sender's tag and its index, repeated.
        let sending = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for tag in 0..<senders {
                    group.addTask {
                        for index in 0..<frames {
                            try await client.send([UInt8](repeating: UInt8(tag << 4 | index), count: size))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // Once every frame is written the client closes: a broken stream then ends in an
        // error rather than a receive waiting for a body that never comes.
        let closing = Task {
            _ = await sending.result
            await client.close()
        }
        var next = [Int](repeating: 0, count: senders)
        for _ in 0..<(senders * frames) {
            let frame = try await server.receive(timeout: hangGuard)
            let first = try #require(frame.first)
            #expect(frame.count == size)
            #expect(frame.allSatisfy { $0 == first }, "bytes of two frames interleaved")
            let (tag, index) = (Int(first >> 4), Int(first & 0x0f))
            #expect(index == next[tag], "sender \(tag)'s frames out of order")
            next[tag] = index + 1
        }
        try await sending.value
        await closing.value
        #expect(next == [Int](repeating: frames, count: senders))
        await server.close(); await listener.close()
    }

    @Test("a TCP frame announcing more than the limit is rejected before allocation")
    func tcpOversized() async throws {
        let listener = try privateTCPListener(maxMessageSize: 1024)
        let address = try #require(listener.endpoint.tcpAddress)
        let (host, port) = (address.host, address.port)
        async let accepted = listener.accept(timeout: hangGuard)
        let client = try await TCPTransport.connect(host: host, port: port)
        let server = try await accepted
        try await client.send([UInt8](repeating: 1, count: 2048))
        await #expect(throws: ProximityError.malformedFrame(.declaredLengthTooLarge(declared: 2048, limit: 1024))) {
            try await server.receive(timeout: hangGuard)
        }
        await #expect(throws: ProximityError.messageTooLarge(size: 2048, limit: 1024)) {
            try await server.send([UInt8](repeating: 1, count: 2048))
        }
        await client.close(); await server.close(); await listener.close()
    }

    @Test("accept times out; connecting to a closed port fails with a typed error")
    func tcpFailures() async throws {
        let listener = try privateTCPListener()
        await #expect(throws: ProximityError.self) { try await listener.accept(timeout: .milliseconds(100)) }
        let port = try #require(listener.endpoint.tcpAddress).port
        await listener.close()
        // Refused on loopback by the time the connect started without blocking looks.
        await #expect(throws: ProximityError.transportFailed(.socket(.connect, errno: ECONNREFUSED))) {
            try await TCPTransport.connect(host: "127.0.0.1", port: port)
        }
        await #expect(throws: ProximityError.transportFailed(.invalidAddress("not-an-ip"))) {
            try await TCPTransport.connect(host: "not-an-ip", port: port)
        }
    }

    /// A raw socket connected to `listener`, and the transport the listener accepted.
    private static func rawPeer(_ listener: TCPListener) async throws -> (SocketHandle, any MdocTransport) {
        let address = try #require(listener.endpoint.tcpAddress)
        async let accepted = listener.accept(timeout: hangGuard)
        let raw = try SocketHandle.connect(host: address.host, port: address.port).get()
        return (raw, try await accepted)
    }

    /// Where the reactor reads (Linux), and where a BlockingIO loop does (elsewhere, or no epoll).
    static let readers = [true, false]

    @Test("TCP frames arriving a few bytes at a time, or two in one write, are each delivered whole", arguments: readers)
    func tcpPiecemealFrames(watched: Bool) async throws {
        let listener = try privateTCPListener(watched: watched)
        let (raw, server) = try await Self.rawPeer(listener)
        let body = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let frame = [0, 0, 0x13, 0x88] + body
        // The header a byte at a time, then the body in uneven pieces; the pauses only
        // make separate arrivals likely, the outcome does not depend on them.
        let cuts = [1, 2, 3, 4, 100, 101, 2600, frame.count]
        var from = 0
        for cut in cuts {
            #expect(throws: Never.self) { try raw.writeAll(frame[from..<cut]).get() }
            from = cut
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(try await server.receive(timeout: hangGuard) == body)
        // Two frames (the second empty) and the header of a third in one write.
        #expect(throws: Never.self) { try raw.writeAll([0, 0, 0, 2, 9, 8, 0, 0, 0, 0, 0, 0][...]).get() }
        #expect(try await server.receive(timeout: hangGuard) == [9, 8])
        #expect(try await server.receive(timeout: hangGuard) == [])
        // The third frame's body never comes whole: the stream ends inside it.
        #expect(throws: Never.self) { try raw.writeAll([0, 10, 1, 2, 3][...]).get() }
        raw.shutdown()
        await #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: 10, actual: 3))) {
            try await server.receive(timeout: hangGuard)
        }
        raw.release()
        await server.close(); await listener.close()
    }

    @Test("a TCP frame's body gets room as its bytes arrive, not as its header announces", arguments: readers)
    func tcpAnnouncedButNotSent(watched: Bool) async throws {
        // The room doubles from 64 KiB and never passes the announced length: a peer that
        // announces 16 MiB makes the reader hold at most twice what it sent.
        let limit = TCPTransport.defaultMaxMessageSize
        var rooms = [min(limit, TCPTransport.initialBodyAllocation)]
        while rooms.last! < limit { rooms.append(TCPTransport.nextBodyAllocation(current: rooms.last!, length: limit)) }
        #expect(rooms.first == 65_536 && rooms.last == limit && rooms.count == 9)
        #expect(zip(rooms, rooms.dropFirst()).allSatisfy { $1 == 2 * $0 })
        #expect(TCPTransport.nextBodyAllocation(current: 65_536, length: 100_000) == 100_000)

        // Over a socket: a whole frame that needs the room grown three times, then a frame
        // announcing the limit, 200,000 bytes of it, and the end.
        let listener = try privateTCPListener(watched: watched)
        let (raw, server) = try await Self.rawPeer(listener)
        func header(_ length: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } }
        let whole = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }
        #expect(throws: Never.self) { try raw.writeAll((header(whole.count) + whole)[...]).get() }
        #expect(try await server.receive(timeout: hangGuard) == whole)
        let announced = limit
        let sent = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        #expect(throws: Never.self) { try raw.writeAll((header(announced) + sent)[...]).get() }
        raw.shutdown()
        await #expect(throws: ProximityError.malformedFrame(.lengthMismatch(declared: announced, actual: 200_000))) {
            try await server.receive(timeout: hangGuard)
        }
        raw.release()
        await server.close(); await listener.close()
    }

    @Test("the TCP carrier's sockets: a listener is non-blocking, a connection and an accepted one block; on Linux all are closed on exec")
    func tcpSocketModes() throws {
        let (listener, port) = try SocketHandle.listen(host: "127.0.0.1", port: 0).get()
        let client = try SocketHandle.connect(host: "127.0.0.1", port: port).get()
        // The connect has completed, so the connection waits in the accept queue already.
        guard case .accepted(let server) = listener.acceptOnce(pollMilliseconds: 60_000) else {
            Issue.record("no connection to accept")
            return
        }
        #expect(listener.isNonBlocking)
        #expect(!client.isNonBlocking && !server.isNonBlocking)
        #if os(Linux)
        #expect(listener.closesOnExec && client.closesOnExec && server.closesOnExec)
        #endif
        for socket in [client, server, listener] { socket.shutdown(); socket.release() }
    }

    @Test("a TCP stream that ends inside a frame's header ends the transport cleanly", arguments: readers)
    func tcpEndInsideHeader(watched: Bool) async throws {
        let listener = try privateTCPListener(watched: watched)
        let (raw, server) = try await Self.rawPeer(listener)
        #expect(throws: Never.self) { try raw.writeAll([0, 0, 0, 1, 42, 0, 0][...]).get() }
        #expect(try await server.receive(timeout: hangGuard) == [42])
        raw.shutdown()
        await #expect(throws: ProximityError.connectionClosed) { try await server.receive(timeout: hangGuard) }
        raw.release()
        await server.close(); await listener.close()
    }

    @Test("without the reactor, TCP frames by length both ways, rejects an oversized one, and the listener closes", arguments: [1024])
    func tcpBlockingLoops(limit: Int) async throws {
        let listener = try privateTCPListener(maxMessageSize: limit, watched: false)
        #expect(listener.watchToken == nil)
        let (raw, server) = try await Self.rawPeer(listener)
        let address = try #require(listener.endpoint.tcpAddress)
        async let accepted = listener.accept(timeout: hangGuard)
        let client = TCPTransport(socket: try SocketHandle.connect(host: address.host, port: address.port).get(),
                                  maxMessageSize: limit, clock: SystemClock(), watched: false)
        let other = try await accepted
        for message in [[], [1], [UInt8](repeating: 7, count: limit)] {
            try await client.send(message)
            #expect(try await other.receive(timeout: hangGuard) == message)
            try await other.send(message.reversed())
            #expect(try await client.receive(timeout: hangGuard) == message.reversed())
        }
        #expect(throws: Never.self) { try raw.writeAll([0, 0, 0x08, 0x00][...]).get() }
        await #expect(throws: ProximityError.malformedFrame(.declaredLengthTooLarge(declared: 2048, limit: limit))) {
            try await server.receive(timeout: hangGuard)
        }
        raw.release()
        await client.close()
        await #expect(throws: ProximityError.connectionClosed) { try await other.receive(timeout: hangGuard) }
        await other.close(); await server.close(); await listener.close()
        await #expect(throws: ProximityError.connectionClosed) { try await listener.accept(timeout: hangGuard) }
    }

    #if os(Linux)
    @Test("closing a TCP listener or transport ends its reactor watch at once; the peer's ends when it sees the end")
    func tcpWatchesEnd() async throws {
        let reactor = try #require(SocketReactor.shared)
        for waiting in [false, true] {
            let listener = try privateTCPListener()
            let token = try #require(listener.watchToken)
            #expect(reactor.isWatching(token))
            let accept = Task { try await listener.accept(timeout: hangGuard) }
            if !waiting { accept.cancel() }
            await listener.close()
            #expect(!reactor.isWatching(token))
            await #expect(throws: ProximityError.self) { try await accept.value }
        }
        let listener = try privateTCPListener()
        let address = try #require(listener.endpoint.tcpAddress)
        async let accepted = listener.accept(timeout: hangGuard)
        let client = try await TCPTransport.connect(host: address.host, port: address.port)
        let server = try #require(try await accepted as? TCPTransport)
        let (clientToken, serverToken) = (try #require(client.watchToken), try #require(server.watchToken))
        #expect(reactor.isWatching(clientToken) && reactor.isWatching(serverToken))
        await client.close()
        #expect(!reactor.isWatching(clientToken))
        await #expect(throws: ProximityError.connectionClosed) { try await server.receive(timeout: hangGuard) }
        // The reactor ends the server's watch once its handler, which delivered the end,
        // returns; bounded, never a pass by timing.
        for _ in 0..<1000 where reactor.isWatching(serverToken) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!reactor.isWatching(serverToken))
        await server.close(); await listener.close()
    }

    /// Sockets of this process in the kernel's `SYN_SENT` state towards `port` on
    /// 127.0.0.1, from /proc/net/tcp.
    static func synSent(to port: UInt16) throws -> Int {
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let remote = String(format: "0100007F:%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && fields[3] == "02"
        }.count
    }

    @Test("a TCP connect left pending (the peer's accept queue is full) times out and is closed at once; one that completes later connects")
    func tcpPendingConnect() async throws {
        // Backlog 0: the kernel queues one connection and drops the SYNs of the next.
        let (listening, port) = try SocketHandle.listen(host: "127.0.0.1", port: 0, backlog: 0).get()
        let first = try await TCPTransport.connect(host: "127.0.0.1", port: port, timeout: hangGuard)
        await #expect(throws: ProximityError.timeout(seconds: 0.2)) {
            try await TCPTransport.connect(host: "127.0.0.1", port: port, timeout: .milliseconds(200))
        }
        // Given up: closed, not left retrying its SYN.
        #expect(try Self.synSent(to: port) == 0)
        // A connect that waits while the queue frees up connects once the kernel retries
        // its SYN (about a second later) and the reactor sees it writable.
        let pending = Task { try await TCPTransport.connect(host: "127.0.0.1", port: port, timeout: hangGuard) }
        // Accepting (and reading) blocks, so it runs off the cooperative pool.
        let queued = await withCheckedContinuation { (done: CheckedContinuation<[SocketHandle], Never>) in
            DispatchQueue.global().async {
                var queued: [SocketHandle] = []
                while queued.count < 2 {
                    if case .accepted(let socket) = listening.acceptOnce(pollMilliseconds: 100) { queued.append(socket) }
                }
                done.resume(returning: queued)
            }
        }
        let second = try await pending.value
        try await second.send([7, 7])
        let received = await withCheckedContinuation { (done: CheckedContinuation<[UInt8]?, Never>) in
            DispatchQueue.global().async {
                var bytes = [UInt8](repeating: 0, count: 6)
                guard case .done = queued[1].readExactly(into: &bytes, count: 6) else { return done.resume(returning: nil) }
                done.resume(returning: bytes)
            }
        }
        #expect(received == [0, 0, 0, 2, 7, 7])
        await first.close(); await second.close()
        for socket in queued + [listening] { socket.shutdown(); socket.release() }
    }
    #endif
}
