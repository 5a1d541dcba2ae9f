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
    /// `{"id","title","createdAt","lastMessage","lastMessageDate","unread","revision","list",
    /// "pinned","pinOrder","muted"}`
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id),
            "title": .string(title),
            "createdAt": .integer(createdAt),
            "lastMessage": lastMessage?.jsonValue ?? .null,
            "lastMessageDate": .integer(lastMessageDate),
            "unread": .integer(unread),
            "revision": .integer(revision),
            "list": .string(list.rawValue),
            "pinned": .bool(pinned),
            "pinOrder": .integer(pinOrder),
            "muted": .bool(muted),
        ])
    }

    /// Reads the JSON of `jsonValue` (for clients and tests); `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "chat") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: [
            "id", "title", "createdAt", "lastMessage", "lastMessageDate", "unread", "revision",
            "list", "pinned", "pinOrder", "muted",
        ])
        var lastMessage: LastMessage?
        if let value = reader.object["lastMessage"], value != .null {
            lastMessage = try LastMessage(jsonValue: value, field: reader.path("lastMessage"))
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
    /// `{"chats","messages","unmutedChats","unmutedMessages"}`
    public var jsonValue: JSONValue {
        .object([
            "chats": .integer(chats), "messages": .integer(messages),
            "unmutedChats": .integer(unmutedChats), "unmutedMessages": .integer(unmutedMessages),
        ])
    }

    /// Reads the JSON of `jsonValue`; `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "unread") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["chats", "messages", "unmutedChats", "unmutedMessages"])
        self.init(
            chats: try reader.int64("chats", in: 0...Int64.max), messages: try reader.int64("messages", in: 0...Int64.max),
            unmutedChats: try reader.int64("unmutedChats", in: 0...Int64.max),
            unmutedMessages: try reader.int64("unmutedMessages", in: 0...Int64.max))
    }

    /// Appends the JSON of `jsonValue` to `output`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"chats":"#.utf8)
        JSONOutput.appendInteger(chats, to: &output)
        output.append(contentsOf: #","messages":"#.utf8)
        JSONOutput.appendInteger(messages, to: &output)
        output.append(contentsOf: #","unmutedChats":"#.utf8)
        JSONOutput.appendInteger(unmutedChats, to: &output)
        output.append(contentsOf: #","unmutedMessages":"#.utf8)
        JSONOutput.appendInteger(unmutedMessages, to: &output)
        output.append(UInt8(ascii: "}"))
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
