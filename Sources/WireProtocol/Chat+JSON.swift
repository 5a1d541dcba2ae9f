import ChatModel
import JSONCodec

extension LastMessage {
    /// Decodes `{"id","sender","text","sentAt"}`; `field` names the value in errors.
    public init(jsonValue: JSONValue, field: String = "lastMessage") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["id", "sender", "text", "sentAt"])
        self.init(
            id: try reader.string("id"), sender: try reader.string("sender"), text: try reader.string("text"),
            sentAt: try reader.int64("sentAt"))
    }
}

extension Chat {
    /// Decodes a chat as `appendJSON(to:)` writes it (for clients); `field` names the value in errors.
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
    /// Decodes `{"chats","messages","unmutedChats","unmutedMessages"}`; `field` names the value in
    /// errors.
    public init(jsonValue: JSONValue, field: String = "unread") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["chats", "messages", "unmutedChats", "unmutedMessages"])
        self.init(
            chats: try reader.int64("chats", in: 0...Int64.max), messages: try reader.int64("messages", in: 0...Int64.max),
            unmutedChats: try reader.int64("unmutedChats", in: 0...Int64.max),
            unmutedMessages: try reader.int64("unmutedMessages", in: 0...Int64.max))
    }
}

extension Message {
    /// Decodes a message as `appendJSON(to:)` writes it (for clients); `field` names the value in
    /// errors.
    public init(jsonValue: JSONValue, field: String = "message") throws(ChatError) {
        let reader = try ParamsReader(jsonValue, field: field, allowed: ["id", "chat", "sender", "text", "sentAt", "editedAt"])
        self.init(
            id: try reader.string("id"), chat: try reader.string("chat"), sender: try reader.string("sender"),
            text: try reader.string("text"), sentAt: try reader.int64("sentAt"),
            editedAt: try reader.optionalInt64("editedAt"))
    }
}
