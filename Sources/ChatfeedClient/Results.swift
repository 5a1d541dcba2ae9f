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
public struct MessageListPage: Hashable, Sendable {
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
