import ChatModel
import JSONCodec

/// `chats.list`: `list` (default main), `unreadOnly` (default false), `offset` (default 0) and
/// `limit` (default 100, at most `maxLimit`).
public struct ChatsListParams: Hashable, Sendable {
    public static let defaultLimit = 100
    public static let maxLimit = 10_000

    public var view: ChatListView
    public var offset: Int
    public var limit: Int

    public init(view: ChatListView = .main, offset: Int = 0, limit: Int = ChatsListParams.defaultLimit) {
        self.view = view
        self.offset = offset
        self.limit = limit
    }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "chats.list", allowed: ["list", "unreadOnly", "offset", "limit"], alsoAllowed: WireMethod.userParam)
        self.init(
            view: ChatListView(
                list: try reader.optionalList("list") ?? .main, unreadOnly: try reader.optionalBool("unreadOnly") ?? false),
            offset: try reader.optionalInt("offset", in: 0...Int.max) ?? 0,
            limit: try reader.optionalInt("limit", in: 0...Self.maxLimit) ?? Self.defaultLimit)
    }
}

/// `chats.locate`: the ids whose indices in `list` (default main) are wanted (1 to `maxIDs` valid chat ids).
public struct ChatsLocateParams: Hashable, Sendable {
    public static let maxIDs = 10_000

    public var ids: [String]
    public var list: ChatList

    public init(ids: [String], list: ChatList = .main) {
        self.ids = ids
        self.list = list
    }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "chats.locate", allowed: ["ids", "list"], alsoAllowed: WireMethod.userParam)
        self.init(ids: try reader.identifierArray("ids", count: 1...Self.maxIDs), list: try reader.optionalList("list") ?? .main)
    }
}

/// `messages.list`: a page of a chat's messages, newest first by (sentAt, id): those with
/// `sentAt < before` when given, after the position of `cursor` when given (both apply together),
/// `limit` of them (1 to `maxLimit`).
public struct MessagesListParams: Hashable, Sendable {
    public static let defaultLimit = 50
    public static let maxLimit = 10_000

    public var chat: String
    /// Exclusive upper bound on `sentAt`.
    public var before: Int64?
    /// The position a `cursor` continues after.
    public var after: MessagePosition?
    public var limit: Int

    public init(chat: String, before: Int64? = nil, after: MessagePosition? = nil, limit: Int = MessagesListParams.defaultLimit) {
        self.chat = chat
        self.before = before
        self.after = after
        self.limit = limit
    }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "messages.list", allowed: ["chat", "before", "cursor", "limit"], alsoAllowed: WireMethod.userParam)
        let chat = try reader.identifier("chat")
        var after: MessagePosition?
        if let cursor = try reader.optionalString("cursor") { after = try MessageCursor.decode(cursor, chat: chat) }
        self.init(
            chat: chat,
            before: try reader.optionalInt64("before"),
            after: after,
            limit: try reader.optionalInt("limit", in: 1...Self.maxLimit) ?? Self.defaultLimit)
    }
}

/// `feed.subscribe`: a list (default main), optionally only its chats with unread messages, a
/// window of the first `limit` chats (nil: the whole list), the number of unacknowledged
/// notifications allowed (nil: the configured default; 0: no acks needed), and the rows the
/// client shows when it resumes (`known`, at most `maxKnownRows`, in its order).
public struct FeedSubscribeParams: Hashable, Sendable {
    public static let maxKnownRows = 10_000

    public var view: ChatListView
    public var limit: Int?
    public var maxInFlight: Int?
    public var known: [KnownRow]?

    public init(view: ChatListView = .main, limit: Int? = nil, maxInFlight: Int? = nil, known: [KnownRow]? = nil) {
        self.view = view
        self.limit = limit
        self.maxInFlight = maxInFlight
        self.known = known
    }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(
            params: params, method: "feed.subscribe", allowed: ["list", "unreadOnly", "limit", "maxInFlight", "known"], alsoAllowed: WireMethod.userParam)
        self.init(
            view: ChatListView(
                list: try reader.optionalList("list") ?? .main, unreadOnly: try reader.optionalBool("unreadOnly") ?? false),
            limit: try reader.optionalInt("limit", in: 1...Int.max),
            maxInFlight: try reader.optionalInt("maxInFlight", in: 0...Int.max),
            known: try Self.known(reader))
    }

    /// `known`: an array of `{"id","revision"}` objects. Duplicate ids are the feed's to refuse.
    private static func known(_ reader: ParamsReader) throws(ChatError) -> [KnownRow]? {
        guard let value = reader.object["known"], value != .null else { return nil }
        guard case .array(let elements) = value else {
            throw .invalidParams(field: "known", reason: "must be an array of {\"id\", \"revision\"} objects, not \(value.typeDescription)")
        }
        guard elements.count <= maxKnownRows else {
            throw .invalidParams(field: "known", reason: "has \(elements.count) rows; the limit is \(maxKnownRows)")
        }
        var rows: [KnownRow] = []
        rows.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            let row = try ParamsReader(element, field: "known[\(position)]", allowed: ["id", "revision"])
            rows.append(KnownRow(id: try row.identifier("id"), revision: try row.int64("revision")))
        }
        return rows
    }
}

/// `chat.members`: the members of `chat`.
public struct ChatMembersParams: Hashable, Sendable {
    public var chat: String

    public init(chat: String) { self.chat = chat }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "chat.members", allowed: ["chat"], alsoAllowed: WireMethod.userParam)
        self.init(chat: try reader.identifier("chat"))
    }
}

/// `feed.ack`: acknowledges every notification of `subscription` up to `seq`.
public struct FeedAckParams: Hashable, Sendable {
    public var subscription: String
    public var seq: Int64

    public init(subscription: String, seq: Int64) {
        self.subscription = subscription
        self.seq = seq
    }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "feed.ack", allowed: ["subscription", "seq"])
        self.init(subscription: try reader.string("subscription"), seq: try reader.int64("seq", in: 0...Int64.max))
    }
}

/// `feed.unsubscribe`.
public struct FeedUnsubscribeParams: Hashable, Sendable {
    public var subscription: String

    public init(subscription: String) { self.subscription = subscription }

    public init(params: JSONValue?) throws(ChatError) {
        let reader = try ParamsReader(params: params, method: "feed.unsubscribe", allowed: ["subscription"])
        self.init(subscription: try reader.string("subscription"))
    }
}
