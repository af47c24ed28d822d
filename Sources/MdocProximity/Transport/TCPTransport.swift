import Foundation
import WalletRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Session messages over a TCP socket, each framed by a 4-byte big-endian length.
/// For desktop tools, tests and loopback demos (ISO 18013-5 defines no TCP
/// carrier; this one is the SDK's own).
///
/// A dedicated thread reads frames into a queue, so no cooperative thread ever
/// blocks on the socket; writes run on a serial queue of their own.
public final class TCPTransport: MdocTransport {
    /// The largest message accepted unless configured otherwise (16 MiB).
    public static let defaultMaxMessageSize = 16 * 1024 * 1024

    private let socket: SocketHandle
    private let inbox = Mailbox<[UInt8]>()
    private let writer = DispatchQueue(label: "MdocProximity.TCPTransport.write")
    private let maxMessageSize: Int

    init(socket: SocketHandle, maxMessageSize: Int) {
        self.socket = socket
        self.maxMessageSize = maxMessageSize
        let thread = Thread { [socket, inbox] in
            TCPTransport.readLoop(socket: socket, inbox: inbox, maxMessageSize: maxMessageSize)
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Connects to `host:port` (an IPv4 address such as `127.0.0.1`).
    public static func connect(host: String, port: UInt16, maxMessageSize: Int = defaultMaxMessageSize)
        async throws(ProximityError) -> TCPTransport {
        let result: Result<SocketHandle, ProximityError> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: SocketHandle.connect(host: host, port: port)) }
            thread.stackSize = 128 * 1024
            thread.start()
        }
        return TCPTransport(socket: try result.get(), maxMessageSize: maxMessageSize)
    }

    /// `.tcp`.
    public var transmissionType: TransmissionType { .tcp }

    /// Writes one length-prefixed frame.
    public func send(_ message: [UInt8]) async throws(ProximityError) {
        guard message.count <= maxMessageSize else {
            throw .messageTooLarge(size: message.count, limit: maxMessageSize)
        }
        let length = UInt32(message.count)
        let frame = [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + message
        let result: Result<Void, ProximityError> = await withCheckedContinuation { continuation in
            writer.async { [socket] in continuation.resume(returning: socket.writeAll(frame)) }
        }
        try result.get()
    }

    /// The next frame.
    public func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        try await inbox.next(timeout: timeout)
    }

    /// Shuts the socket down; the reader thread ends and closes the descriptor.
    public func close() async {
        socket.shutdown()
        inbox.finish()
    }

    private static func readLoop(socket: SocketHandle, inbox: Mailbox<[UInt8]>, maxMessageSize: Int) {
        defer { socket.closeDescriptor() }
        var header = [UInt8](repeating: 0, count: 4)
        while true {
            switch socket.readExactly(into: &header, count: 4) {
            case .closed: inbox.finish(); return
            case .failed(let error): inbox.finish(error); return
            case .done: break
            }
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            // Enforce the limit before allocating the body.
            guard length <= maxMessageSize else {
                inbox.finish(.malformedFrame(.declaredLengthTooLarge(declared: length, limit: maxMessageSize)))
                socket.shutdown()
                return
            }
            var body = [UInt8](repeating: 0, count: length)
            switch socket.readExactly(into: &body, count: length) {
            case .closed: inbox.finish(.malformedFrame(.lengthMismatch(declared: length, actual: 0))); return
            case .failed(let error): inbox.finish(error); return
            case .done: inbox.push(body)
            }
        }
    }
}

/// Listens on a TCP port of `127.0.0.1` (or another IPv4 address).
public final class TCPListener: MdocTransportListener {
    private let socket: SocketHandle
    private let host: String
    private let port: UInt16
    private let maxMessageSize: Int

    /// Binds `host:port` (port 0 picks a free one) and listens.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, maxMessageSize: Int = TCPTransport.defaultMaxMessageSize)
        throws(ProximityError) {
        let (socket, bound) = try SocketHandle.listen(host: host, port: port).get()
        self.socket = socket
        self.host = host
        self.port = bound
        self.maxMessageSize = maxMessageSize
    }

    /// `.tcp(host:port:)` with the bound port.
    public var endpoint: TransportEndpoint { .tcp(host: host, port: port) }

    /// Waits for a connection (polling so that close and timeouts are noticed).
    public func accept(timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        let seconds = timeout.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        let result: Result<SocketHandle, ProximityError> = await withCheckedContinuation { continuation in
            let thread = Thread { [socket] in continuation.resume(returning: socket.accept(timeout: seconds)) }
            thread.stackSize = 128 * 1024
            thread.start()
        }
        return TCPTransport(socket: try result.get(), maxMessageSize: maxMessageSize)
    }

    /// Stops listening.
    public func close() async {
        socket.markClosed()
    }
}

/// Connects and listens over TCP.
public struct TCPConnector: MdocTransportConnector {
    /// The address listeners bind.
    public let host: String
    /// The largest message accepted.
    public let maxMessageSize: Int

    /// A connector binding `host` (loopback by default).
    public init(host: String = "127.0.0.1", maxMessageSize: Int = TCPTransport.defaultMaxMessageSize) {
        self.host = host
        self.maxMessageSize = maxMessageSize
    }

    /// Connects to a `.tcp` endpoint.
    public func connect(to endpoint: TransportEndpoint, timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        guard case .tcp(let host, let port) = endpoint else { throw .transportFailed("not a TCP endpoint") }
        return try await TCPTransport.connect(host: host, port: port, maxMessageSize: maxMessageSize)
    }

    /// Listens on a free port.
    public func listen() async throws(ProximityError) -> any MdocTransportListener {
        try TCPListener(host: host, maxMessageSize: maxMessageSize)
    }
}
