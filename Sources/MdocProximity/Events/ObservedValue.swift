import WalletRuntime

/// A read-only view of a value that changes over time: ``current`` reads it,
/// iterating yields the current value first and then every change, to any
/// number of observers (DESIGN rule 7).
public struct ObservedValue<Value: Sendable>: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = Value

    private let stream: StateStream<Value>

    init(_ stream: StateStream<Value>) { self.stream = stream }

    /// The value now.
    public var current: Value { stream.current }

    /// A new subscription, made at the moment of the call: the current value
    /// first, then every change.
    public var values: AsyncStream<Value> { stream.states }

    /// A new subscription that starts with the current value.
    public func makeAsyncIterator() -> AsyncStream<Value>.Iterator {
        stream.states.makeAsyncIterator()
    }
}
