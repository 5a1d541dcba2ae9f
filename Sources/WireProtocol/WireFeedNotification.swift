import ChatModel
import JSONCodec

/// A row placed by a batch: `index` in the list after the batch.
public struct WireIndexedChat: Hashable, Sendable {
    public var index: Int
    public var chat: Chat

    public init(index: Int, chat: Chat) {
        self.index = index
        self.chat = chat
    }
}

/// A row moved by a batch: `from` in the list before it, `to` in the list after it.
public struct WireMove: Hashable, Sendable {
    public var from: Int
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }
}

/// The params of a `feed.batch` notification (SPEC §3–§5).
public struct FeedBatchParams: Hashable, Sendable {
    public var subscription: String
    public var seq: Int64
    /// Rows in the subscription's list after the batch.
    public var count: Int
    /// Chats in the store.
    public var total: Int
    public var deletes: [Int]
    public var inserts: [WireIndexedChat]
    public var moves: [WireMove]
    public var updates: [WireIndexedChat]

    public init(
        subscription: String, seq: Int64, count: Int, total: Int, deletes: [Int] = [],
        inserts: [WireIndexedChat] = [], moves: [WireMove] = [], updates: [WireIndexedChat] = []
    ) {
        self.subscription = subscription
        self.seq = seq
        self.count = count
        self.total = total
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.updates = updates
    }

    public var jsonValue: JSONValue {
        WireResults.feedBatch(
            subscription: subscription, seq: seq, count: count, total: total, deletes: deletes,
            inserts: inserts.map { (index: $0.index, chat: $0.chat) }, moves: moves.map { (from: $0.from, to: $0.to) },
            updates: updates.map { (index: $0.index, chat: $0.chat) })
    }

    public init(jsonValue: JSONValue) throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: "", allowed: [
            "subscription", "seq", "count", "total", "deletes", "inserts", "moves", "updates",
        ], context: WireMethod.feedBatchNotification)
        func array(_ key: String) throws(ChatError) -> [JSONValue] {
            guard let value = reader.object[key] else { throw .invalidParams(field: key, reason: "is required") }
            guard case .array(let elements) = value else {
                throw .invalidParams(field: key, reason: "must be an array, not \(value.typeDescription)")
            }
            return elements
        }
        func indexedChats(_ key: String) throws(ChatError) -> [WireIndexedChat] {
            var result: [WireIndexedChat] = []
            for (position, element) in try array(key).enumerated() {
                let item = try ParamsReader(element, field: "\(key)[\(position)]", allowed: ["index", "chat"])
                guard let chat = item.object["chat"] else { throw .invalidParams(field: item.path("chat"), reason: "is required") }
                result.append(WireIndexedChat(
                    index: try item.int("index", in: 0...Int.max), chat: try Chat(jsonValue: chat, field: item.path("chat"))))
            }
            return result
        }
        var deletes: [Int] = []
        for (position, element) in try array("deletes").enumerated() {
            guard let index = element.int64Value, index >= 0 else {
                throw .invalidParams(field: "deletes[\(position)]", reason: "must be an index (an integer ≥ 0)")
            }
            deletes.append(Int(index))
        }
        var moves: [WireMove] = []
        for (position, element) in try array("moves").enumerated() {
            let move = try ParamsReader(element, field: "moves[\(position)]", allowed: ["from", "to"])
            moves.append(WireMove(from: try move.int("from", in: 0...Int.max), to: try move.int("to", in: 0...Int.max)))
        }
        self.init(
            subscription: try reader.string("subscription"), seq: try reader.int64("seq", in: 0...Int64.max),
            count: try reader.int("count", in: 0...Int.max), total: try reader.int("total", in: 0...Int.max),
            deletes: deletes, inserts: try indexedChats("inserts"), moves: moves, updates: try indexedChats("updates"))
    }
}

/// The params of a `feed.reset` notification: the subscription's whole list at one moment.
public struct FeedResetParams: Hashable, Sendable {
    public var subscription: String
    public var seq: Int64
    public var count: Int
    public var total: Int
    public var items: [Chat]

    public init(subscription: String, seq: Int64, count: Int, total: Int, items: [Chat]) {
        self.subscription = subscription
        self.seq = seq
        self.count = count
        self.total = total
        self.items = items
    }

    public var jsonValue: JSONValue {
        WireResults.feedReset(subscription: subscription, seq: seq, count: count, total: total, items: items)
    }

    public init(jsonValue: JSONValue) throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: "", allowed: ["subscription", "seq", "count", "total", "items"],
                                      context: WireMethod.feedResetNotification)
        guard case .array(let elements)? = reader.object["items"] else {
            throw .invalidParams(field: "items", reason: "must be an array of chats")
        }
        var items: [Chat] = []
        items.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            items.append(try Chat(jsonValue: element, field: "items[\(position)]"))
        }
        self.init(
            subscription: try reader.string("subscription"), seq: try reader.int64("seq", in: 0...Int64.max),
            count: try reader.int("count", in: 0...Int.max), total: try reader.int("total", in: 0...Int.max), items: items)
    }
}

/// A feed notification from the daemon, decoded for a client.
public enum WireFeedNotification: Hashable, Sendable {
    case batch(FeedBatchParams)
    case reset(FeedResetParams)

    /// Nil for a method that is not a feed notification.
    public init?(method: String, params: JSONValue) throws(ChatError) {
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
