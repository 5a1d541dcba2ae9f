import ChatModel
import JSONCodec
import WireProtocol

/// A page of a chat list (`chats.list`): `items` from the requested offset, in list order.
public struct ChatPage: Hashable, Sendable {
    /// Chats in the whole list (whatever `unreadOnly`).
    public var total: Int
    /// The list's unread counters.
    public var unread: UnreadCounters
    public var items: [Chat]

    public init(total: Int, unread: UnreadCounters = UnreadCounters(), items: [Chat]) {
        self.total = total
        self.unread = unread
        self.items = items
    }
}

/// Where chats are in the list (`chats.locate`): restore a scroll position or a selection by id.
public struct ChatLocations: Hashable, Sendable {
    public var total: Int
    /// The index of every located chat that is in the list; absent ids are not.
    public var indices: [String: Int]

    public init(total: Int, indices: [String: Int]) {
        self.total = total
        self.indices = indices
    }
}

/// A page of a chat's messages (`messages.list`), newest first.
public struct MessagePage: Hashable, Sendable {
    public var items: [Message]
    /// Continues after the page's last message; nil on the last page (or from an engine that
    /// does not page by cursor).
    public var nextCursor: String?

    public init(items: [Message], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// What `message.post` did.
public struct PostResult: Hashable, Sendable {
    /// True when the message was already there with the same content: nothing changed.
    public var duplicate: Bool

    public init(duplicate: Bool) { self.duplicate = duplicate }
}

/// `server.stats`: the store's counts and the engine's subscriptions.
public struct ServerStats: Hashable, Sendable {
    public var chats: Int
    public var messages: Int
    public var latestChangeSequence: Int64
    /// Since the engine started.
    public var uptimeMilliseconds: Int64
    /// Every subscription the engine serves (every client's, not only this one's).
    public var subscriptions: [SubscriptionStats]
    /// The whole answer, for the fields this type does not name.
    public var json: JSONValue
}

/// One subscription in `server.stats`: what it sees and how far its client is behind.
public struct SubscriptionStats: Hashable, Sendable {
    public var subscription: String
    public var list: ChatList
    public var unreadOnly: Bool
    /// The window (nil: the whole list).
    public var limit: Int?
    public var maxInFlight: Int
    public var lastSentSeq: Int64
    public var lastAckedSeq: Int64
    /// Distinct chats changed since its last notification.
    public var pendingChats: Int
    /// A deferred batch waits to be sent.
    public var deferredPending: Bool
    /// Its next notification is a reset (the window fell too far behind).
    public var resetPending: Bool

    init(_ reader: ResultReader, position: Int) throws {
        let path = "subscriptions[\(position)]"
        func fail(_ key: String) -> ChatfeedClientError { reader.fail("'\(path).\(key)' is missing or has the wrong type") }
        guard let subscription = reader.value["subscription"]?.stringValue else { throw fail("subscription") }
        guard let list = reader.value["list"]?.stringValue.flatMap(ChatList.init(rawValue:)) else { throw fail("list") }
        guard let unreadOnly = reader.value["unreadOnly"]?.boolValue else { throw fail("unreadOnly") }
        guard let deferredPending = reader.value["deferredPending"]?.boolValue else { throw fail("deferredPending") }
        guard let resetPending = reader.value["resetPending"]?.boolValue else { throw fail("resetPending") }
        self.subscription = subscription
        self.list = list
        self.unreadOnly = unreadOnly
        limit = reader.value["limit"]?.int64Value.map { Int($0) }
        maxInFlight = try reader.int("maxInFlight")
        lastSentSeq = Int64(try reader.int("lastSentSeq"))
        lastAckedSeq = Int64(try reader.int("lastAckedSeq"))
        pendingChats = try reader.int("pendingChats")
        self.deferredPending = deferredPending
        self.resetPending = resetPending
    }
}

/// Reads answers leniently: a field the engine adds is ignored, a missing one is an error that
/// names it.
struct ResultReader {
    let method: String
    let value: JSONValue

    func fail(_ reason: String) -> ChatfeedClientError { .malformedResponse(method: method, reason: reason) }

    func int(_ key: String) throws -> Int {
        guard let number = value[key]?.int64Value else { throw fail("'\(key)' is missing or not an integer") }
        return Int(number)
    }

    func array(_ key: String) throws -> [JSONValue] {
        guard let array = value[key]?.arrayValue else { throw fail("'\(key)' is missing or not an array") }
        return array
    }

    /// The list's counters (`unread`); zeros from an engine that does not send them.
    func unread() throws -> UnreadCounters {
        guard let value = value["unread"], value != .null else { return UnreadCounters() }
        do { return try UnreadCounters(jsonValue: value) } catch { throw fail("\(error)") }
    }

    func chat() throws -> Chat {
        do { return try Chat(jsonValue: value, field: "result") } catch { throw fail("\(error)") }
    }

    func chats(_ key: String) throws -> [Chat] {
        var chats: [Chat] = []
        for (position, item) in try array(key).enumerated() {
            do { chats.append(try Chat(jsonValue: item, field: "\(key)[\(position)]")) } catch { throw fail("\(error)") }
        }
        return chats
    }

    func messages(_ key: String) throws -> [Message] {
        var messages: [Message] = []
        for (position, item) in try array(key).enumerated() {
            do { messages.append(try Message(jsonValue: item, field: "\(key)[\(position)]")) } catch { throw fail("\(error)") }
        }
        return messages
    }
}
