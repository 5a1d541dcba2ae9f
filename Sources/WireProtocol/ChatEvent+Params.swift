import ChatModel
import JSONCodec

extension ChatEvent {
    /// Decodes the params of a write method and validates the event (`ChatEvent.validate()`).
    /// `now` (ms since the epoch) fills `createdAt` of `chat.create` and `editedAt` of
    /// `message.edit` when they are absent. Returns nil for a method that is not a write.
    public static func decode(method: WireMethod, params: JSONValue?, now: Int64) throws(ChatError) -> ChatEvent? {
        let event: ChatEvent
        switch method {
        case .chatCreate:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["chat", "title", "createdAt"])
            event = .createChat(
                id: try reader.string("chat"), title: try reader.string("title"),
                createdAt: try reader.optionalInt64("createdAt") ?? now)
        case .chatRename:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["chat", "title"])
            event = .renameChat(id: try reader.string("chat"), title: try reader.string("title"))
        case .chatRemove:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["chat"])
            event = .removeChat(id: try reader.string("chat"))
        case .chatMarkRead:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["chat"])
            event = .markRead(id: try reader.string("chat"))
        case .chatPin, .chatUnpin, .chatArchive, .chatUnarchive, .chatMute, .chatUnmute:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["chat"])
            let id = try reader.string("chat")
            event = switch method {
            case .chatPin: .pinChat(id: id)
            case .chatUnpin: .unpinChat(id: id)
            case .chatArchive: .moveChat(id: id, to: .archive)
            case .chatUnarchive: .moveChat(id: id, to: .main)
            case .chatMute: .setMuted(id: id, muted: true)
            default: .setMuted(id: id, muted: false)
            }
        case .chatSetPinned:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["list", "chats"])
            guard let list = try reader.optionalList("list") else {
                throw .invalidParams(field: "list", reason: "is required")
            }
            event = .setPinned(list: list, chats: try reader.stringArray("chats", count: 0...ChatsLocateParams.maxIDs))
        case .messagePost:
            let reader = try ParamsReader(
                params: params, method: method.rawValue, allowed: ["chat", "id", "sender", "text", "sentAt"])
            event = .postMessage(Message(
                id: try reader.string("id"), chat: try reader.string("chat"), sender: try reader.string("sender"),
                text: try reader.string("text"), sentAt: try reader.int64("sentAt")))
        case .messageEdit:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["id", "text", "editedAt"])
            event = .editMessage(
                id: try reader.string("id"), text: try reader.string("text"),
                editedAt: try reader.optionalInt64("editedAt") ?? now)
        case .messageDelete:
            let reader = try ParamsReader(params: params, method: method.rawValue, allowed: ["id"])
            event = .deleteMessage(id: try reader.string("id"))
        default:
            return nil
        }
        try event.validate()
        return event
    }
}
