import ChatModel
import ListDiff

/// What a subscription sees: one list (`main` or `archive`), all its chats or only those with
/// unread messages, all of it or its first `limit` rows (docs/PROTOCOL.md, The live feed).
public struct SubscriptionOptions: Hashable, Sendable {
    public var list: ChatList
    /// Only the chats with unread messages: one that is read leaves, one that gets its first
    /// unread message enters.
    public var unreadOnly: Bool
    /// The first `limit` rows (nil: the whole list).
    public var limit: Int?
    /// Unacknowledged updates the engine may send ahead (default 1: one animation at a time;
    /// 0: no flow control).
    public var maxInFlight: Int

    public init(list: ChatList = .main, unreadOnly: Bool = false, limit: Int? = nil, maxInFlight: Int = 1) {
        self.list = list
        self.unreadOnly = unreadOnly
        self.limit = limit
        self.maxInFlight = maxInFlight
    }
}

/// When the client acknowledges an update to the engine (which then sends the next one).
public enum AcknowledgementMode: Hashable, Sendable {
    /// When the app calls `FeedSubscription.acknowledge(_:)`, e.g. in an animation's completion.
    /// An update the app never acknowledges holds back every later one (with `maxInFlight` ≥ 1).
    case manual
    /// When the app asks the sequence for the next update: the previous one counts as applied.
    /// The default: a plain `for try await` loop needs nothing more.
    case onNext
}

/// One batch of an update and the list after it: the data source to set inside the
/// `performBatchUpdates` that applies `batch`.
public struct FeedStep: Hashable, Sendable {
    public var batch: Batch<Chat>
    public var chats: [Chat]

    public init(batch: Batch<Chat>, chats: [Chat]) {
        self.batch = batch
        self.chats = chats
    }
}

/// One element of a subscription: what to apply to the table, already validated against the
/// client's mirror with `UIKitBatchModel`, the list after it and the list's counters.
public struct FeedUpdate: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// The subscription's first list, or its list after the transport restarted and the
        /// engine could not say what changed: set the data source and reload, no animation.
        case snapshot
        /// The engine sent its list instead of a batch (`feed.reset`): reload, no animation.
        case reset
        /// Animate `steps` in order, one `performBatchUpdates` each (a structural batch, then
        /// its deferred updates). No steps: only the counts changed.
        case batches
    }

    public var kind: Kind
    /// The engine's `seq` of the notification (0 for the subscribe response itself).
    public var seq: Int64
    /// The batches to animate, in order (empty unless `kind == .batches`).
    public var steps: [FeedStep]
    /// The subscription's list after this update.
    public var chats: [Chat]
    /// Chats in the subscription's list (`main` or `archive`), whatever the window and `unreadOnly`.
    public var total: Int
    /// The unread counters of the subscription's list (whatever the window): `unmutedMessages`
    /// is the badge an app shows.
    public var unread: UnreadCounters
    /// Which subscribe of the subscription this belongs to (it changes when the client
    /// resubscribes after a restart); acknowledgements of an older one are dropped.
    let epoch: Int

    /// True when the update is applied with a reload rather than animated.
    public var isReload: Bool { kind != .batches }

    /// Rows after the update (`chats.count`): the engine's `count`, checked.
    public var count: Int { chats.count }

    public init(
        kind: Kind, seq: Int64, steps: [FeedStep], chats: [Chat], total: Int, unread: UnreadCounters = UnreadCounters()
    ) {
        self.init(kind: kind, seq: seq, steps: steps, chats: chats, total: total, unread: unread, epoch: 0)
    }

    init(kind: Kind, seq: Int64, steps: [FeedStep], chats: [Chat], total: Int, unread: UnreadCounters, epoch: Int) {
        self.kind = kind
        self.seq = seq
        self.steps = steps
        self.chats = chats
        self.total = total
        self.unread = unread
        self.epoch = epoch
    }
}
