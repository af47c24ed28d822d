import Foundation

/// Any event of the hub: an engagement event or a retrieval (transfer) event.
public enum MdocEvent: Equatable, Sendable {
    /// An engagement event.
    case engagement(MdocEngagementEvent)
    /// A retrieval event.
    case transfer(MdocRetrievalEvent)

    /// The engagement the event belongs to.
    public var engagementId: EngagementID {
        switch self {
        case .engagement(let event): return event.engagementId
        case .transfer(let event): return event.engagementId
        }
    }

    /// When it happened.
    public var time: Date {
        switch self {
        case .engagement(let event): return event.time
        case .transfer(let event): return event.time
        }
    }

    /// 0-99 engagement, 100-199 transfer, 200+ final.
    public var stateOrder: Int {
        switch self {
        case .engagement(let event): return event.stateOrder
        case .transfer(let event): return event.stateOrder
        }
    }

    /// Whether the event ends its engagement or transfer (order 200 or more).
    public var isFinal: Bool { stateOrder >= 200 }

    /// The case name, for logs.
    public var name: String {
        switch self {
        case .engagement(let event): return "engagement.\(event.name)"
        case .transfer(let event): return "transfer.\(event.name)"
        }
    }
}

/// An event with its position in the hub's timeline.
public struct SequencedEvent: Equatable, Sendable {
    /// Strictly increasing over the hub's lifetime (never reused, also not after clearing).
    public let sequenceNumber: UInt64
    /// The event.
    public let event: MdocEvent
}
