import ChatModel
import JSONCodec

extension LastMessage {
    /// Decodes `{"id","sender","text","sentAt"}`; `field` names the value in errors.
    init(decoding jsonValue: JSONValue, field: String = "lastMessage") throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: field)
        self.init(
            id: try reader.string("id"), sender: try reader.string("sender"), text: try reader.string("text"),
            sentAt: try reader.int64("sentAt"))
    }
}

extension Chat {
    /// Decodes a chat as `appendJSON(to:)` writes it (for clients): members it does not know are
    /// ignored; a missing or mistyped one is a `WireDecodingError` naming it (`field` is the
    /// value's path).
    public init(jsonValue: JSONValue, field: String = "chat") throws(WireDecodingError) {
        do { self = try Chat(decoding: jsonValue, field: field) } catch { throw WireDecodingError(error) }
    }

    init(decoding jsonValue: JSONValue, field: String = "chat") throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: field)
        var lastMessage: LastMessage?
        if let value = reader.object["lastMessage"], value != .null {
            lastMessage = try LastMessage(decoding: value, field: reader.path("lastMessage"))
        }
        self.init(
            id: try reader.string("id"), title: try reader.string("title"), createdAt: try reader.int64("createdAt"),
            lastMessage: lastMessage, lastMessageDate: try reader.int64("lastMessageDate"),
            unread: try reader.int64("unread"), revision: try reader.int64("revision"),
            list: try reader.optionalList("list") ?? .main, pinOrder: try reader.optionalInt64("pinOrder", in: 0...Int64.max) ?? 0,
            muted: try reader.optionalBool("muted") ?? false)
    }
}

extension UnreadCounters {
    /// Decodes `{"chats","messages","unmutedChats","unmutedMessages"}`; `field` names the value in
    /// errors.
    public init(jsonValue: JSONValue, field: String = "unread") throws(WireDecodingError) {
        do { self = try UnreadCounters(decoding: jsonValue, field: field) } catch { throw WireDecodingError(error) }
    }

    init(decoding jsonValue: JSONValue, field: String = "unread") throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: field)
        self.init(
            chats: try reader.int64("chats", in: 0...Int64.max), messages: try reader.int64("messages", in: 0...Int64.max),
            unmutedChats: try reader.int64("unmutedChats", in: 0...Int64.max),
            unmutedMessages: try reader.int64("unmutedMessages", in: 0...Int64.max))
    }
}

extension Message {
    /// Decodes a message as `appendJSON(to:)` writes it (for clients); `field` names the value in
    /// errors.
    public init(jsonValue: JSONValue, field: String = "message") throws(WireDecodingError) {
        do { self = try Message(decoding: jsonValue, field: field) } catch { throw WireDecodingError(error) }
    }

    init(decoding jsonValue: JSONValue, field: String = "message") throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: field)
        self.init(
            id: try reader.string("id"), chat: try reader.string("chat"), sender: try reader.string("sender"),
            text: try reader.string("text"), sentAt: try reader.int64("sentAt"),
            editedAt: try reader.optionalInt64("editedAt"))
    }
}

/// A result or notification this client cannot read: a member is missing or has the wrong type.
/// (Members it does not know are ignored, never an error: a newer server may add some.)
public struct WireDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The member's path in the result, e.g. `items[3].title`.
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// The decoding error of a reader's failure.
    init(_ error: ChatError) {
        switch error {
        case .invalidParams(let field, let reason): self.init(field: field, reason: reason)
        default: self.init(field: "result", reason: error.description)
        }
    }

    public var description: String { "cannot decode '\(field)': \(reason)" }
}
