import ChatModel
import JSONCodec
import ListDiff

/// The params of a `feed.batch` notification (docs/PROTOCOL.md, Applying a batch; docs/PROTOCOL.md): `ListDiff`'s batch, as the feed made it.
public struct FeedBatchParams: Hashable, Sendable {
    public var subscription: String
    public var seq: Int64
    /// Rows in the subscription's list after the batch.
    public var count: Int
    /// Chats in the subscription's list.
    public var total: Int
    /// The counters of the subscription's list.
    public var unread: UnreadCounters
    public var batch: Batch<Chat>

    public init(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters = UnreadCounters(), batch: Batch<Chat>
    ) {
        self.subscription = subscription
        self.seq = seq
        self.count = count
        self.total = total
        self.unread = unread
        self.batch = batch
    }

    /// Decodes the params of a `feed.batch`; members it does not know are ignored.
    public init(jsonValue: JSONValue) throws(WireDecodingError) {
        do { self = try FeedBatchParams(decoding: jsonValue) } catch { throw WireDecodingError(error) }
    }

    private init(decoding jsonValue: JSONValue) throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: "")
        let batchKeys: Set<String> = ["deletes", "inserts", "moves", "updates"]
        let batch = try Batch<Chat>(decoding: .object(JSONObject(reader.object.filter { batchKeys.contains($0.key) })), field: "")
        self.init(
            subscription: try reader.string("subscription"), seq: try reader.int64("seq", in: 0...Int64.max),
            count: try reader.int("count", in: 0...Int.max), total: try reader.int("total", in: 0...Int.max),
            unread: try Self.unread(reader), batch: batch)
    }
}

extension FeedBatchParams {
    /// The `unread` member of a notification (required).
    static func unread(_ reader: ParamsReader) throws(ChatError) -> UnreadCounters {
        guard let value = reader.object["unread"] else { throw .invalidParams(field: "unread", reason: "is required") }
        return try UnreadCounters(decoding: value)
    }
}

/// The params of a `feed.reset` notification: the subscription's whole list at one moment.
public struct FeedResetParams: Hashable, Sendable {
    public var subscription: String
    public var seq: Int64
    public var count: Int
    public var total: Int
    public var unread: UnreadCounters
    public var items: [Chat]

    public init(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters = UnreadCounters(), items: [Chat]
    ) {
        self.subscription = subscription
        self.seq = seq
        self.count = count
        self.total = total
        self.unread = unread
        self.items = items
    }

    /// Decodes the params of a `feed.reset`; members it does not know are ignored.
    public init(jsonValue: JSONValue) throws(WireDecodingError) {
        do { self = try FeedResetParams(decoding: jsonValue) } catch { throw WireDecodingError(error) }
    }

    private init(decoding jsonValue: JSONValue) throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: "")
        guard case .array(let elements)? = reader.object["items"] else {
            throw .invalidParams(field: "items", reason: "must be an array of chats")
        }
        var items: [Chat] = []
        items.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            items.append(try Chat(decoding: element, field: "items[\(position)]"))
        }
        self.init(
            subscription: try reader.string("subscription"), seq: try reader.int64("seq", in: 0...Int64.max),
            count: try reader.int("count", in: 0...Int.max), total: try reader.int("total", in: 0...Int.max),
            unread: try FeedBatchParams.unread(reader), items: items)
    }
}

/// A feed notification from the daemon, decoded for a client.
public enum WireFeedNotification: Hashable, Sendable {
    case batch(FeedBatchParams)
    case reset(FeedResetParams)

    /// Nil for a method that is not a feed notification.
    /// The `subscription` of a notification's params that may not decode as a whole.
    public static func subscriptionID(in params: JSONValue) -> String? {
        params["subscription"]?.stringValue
    }

    public init?(method: String, params: JSONValue) throws(WireDecodingError) {
        switch method {
        case WireMethod.feedBatchNotification: self = .batch(try FeedBatchParams(jsonValue: params))
        case WireMethod.feedResetNotification: self = .reset(try FeedResetParams(jsonValue: params))
        default: return nil
        }
    }

    public var subscription: String {
        switch self {
        case .batch(let batch): batch.subscription
        case .reset(let reset): reset.subscription
        }
    }

    public var seq: Int64 {
        switch self {
        case .batch(let batch): batch.seq
        case .reset(let reset): reset.seq
        }
    }
}
