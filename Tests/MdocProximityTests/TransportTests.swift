import Foundation
import Testing
@testable import MdocProximity

@Suite("Transports: in-memory and TCP loopback")
struct TransportTests {
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
}
