import ChatModel
import JSONCodec

extension LastMessage {
    /// `{"id","sender","text","sentAt"}`
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id), "sender": .string(sender), "text": .string(text), "sentAt": .integer(sentAt),
        ])
    }

    /// Reads the JSON of `jsonValue`; `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "lastMessage") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["id", "sender", "text", "sentAt"])
        self.init(
            id: try reader.string("id"), sender: try reader.string("sender"), text: try reader.string("text"),
            sentAt: try reader.int64("sentAt"))
    }
}

extension Chat {
    /// `{"id","title","createdAt","lastMessage","lastMessageDate","unread","revision"}`
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id),
            "title": .string(title),
            "createdAt": .integer(createdAt),
            "lastMessage": lastMessage?.jsonValue ?? .null,
            "lastMessageDate": .integer(lastMessageDate),
            "unread": .integer(unread),
            "revision": .integer(revision),
        ])
    }

    /// Reads the JSON of `jsonValue` (for clients and tests); `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "chat") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: [
            "id", "title", "createdAt", "lastMessage", "lastMessageDate", "unread", "revision",
        ])
        var lastMessage: LastMessage?
        if let value = reader.object["lastMessage"], value != .null {
            lastMessage = try LastMessage(jsonValue: value, field: reader.path("lastMessage"))
        }
        self.init(
            id: try reader.string("id"), title: try reader.string("title"), createdAt: try reader.int64("createdAt"),
            lastMessage: lastMessage, lastMessageDate: try reader.int64("lastMessageDate"),
            unread: try reader.int64("unread"), revision: try reader.int64("revision"))
    }
}

extension Message {
    /// `{"id","chat","sender","text","sentAt","editedAt"}` with `editedAt` null when never edited.
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id),
            "chat": .string(chat),
            "sender": .string(sender),
            "text": .string(text),
            "sentAt": .integer(sentAt),
            "editedAt": editedAt.map(JSONValue.integer) ?? .null,
        ])
    }

    /// Reads the JSON of `jsonValue` (for clients and tests); `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "message") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["id", "chat", "sender", "text", "sentAt", "editedAt"])
        self.init(
            id: try reader.string("id"), chat: try reader.string("chat"), sender: try reader.string("sender"),
            text: try reader.string("text"), sentAt: try reader.int64("sentAt"),
            editedAt: try reader.optionalInt64("editedAt"))
    }
}

extension EventResult {
    /// The `result` of the write: the chat, `{"duplicate": bool}` or `{}` (SPEC §5).
    public var jsonValue: JSONValue {
        switch self {
        case .chat(let chat): chat.jsonValue
        case .posted(let duplicate): .object(["duplicate": .bool(duplicate)])
        case .done: .object([:])
        }
    }
}
