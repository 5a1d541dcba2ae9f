import ChatModel
import JSONCodec

extension ChatEvent {
    /// Decodes the params of a write method and validates the event (`ChatEvent.validate()`).
    /// `now` (ms since the epoch) fills `createdAt` of `chat.create`, `user.create` and
    /// `editedAt` of `message.edit` when they are absent. `user` is the acting user (resolved
    /// from the `user` param by the engine): the member whose state a per-member write changes,
    /// and the one member of a `chat.create` without `members`. `defaultSender`: the `sender` of
    /// a `message.post` that names none (a user session's own user); nil: `sender` is required.
    /// Returns nil for a method that is not a write.
    public static func decode(
        method: WireMethod, params: JSONValue?, now: Int64, user: String = User.defaultID, defaultSender: String? = nil
    ) throws(ChatError) -> ChatEvent? {
        let event: ChatEvent
        // The acting user's param, where the method takes one.
        let acting = method.takesActingUser ? WireMethod.userParam : nil
        func reader(_ allowed: [String]) throws(ChatError) -> ParamsReader {
            try ParamsReader(params: params, method: method.rawValue, allowed: allowed, alsoAllowed: acting)
        }
        switch method {
        case .userCreate:
            let reader = try reader(["user", "name", "createdAt"])
            let id = try reader.string("user")
            event = .createUser(id: id, name: try reader.optionalString("name") ?? id, createdAt: try reader.optionalInt64("createdAt") ?? now)
        case .userRemove:
            event = .removeUser(id: try reader(["user"]).string("user"))
        case .chatCreate:
            let reader = try reader(["chat", "title", "createdAt", "members"])
            event = .createChat(
                id: try reader.string("chat"), title: try reader.string("title"),
                createdAt: try reader.optionalInt64("createdAt") ?? now,
                members: try reader.optionalStringArray("members", count: 0...ChatsLocateParams.maxIDs) ?? [user])
        case .chatAddMembers, .chatRemoveMembers:
            let reader = try reader(["chat", "users"])
            let chat = try reader.string("chat")
            let users = try reader.stringArray("users", count: 1...ChatsLocateParams.maxIDs)
            event = method == .chatAddMembers ? .addMembers(chat: chat, users: users) : .removeMembers(chat: chat, users: users)
        case .chatRename:
            let reader = try reader(["chat", "title"])
            event = .renameChat(id: try reader.string("chat"), title: try reader.string("title"), user: user)
        case .chatRemove:
            event = .removeChat(id: try reader(["chat"]).string("chat"))
        case .chatMarkRead:
            event = .markRead(id: try reader(["chat"]).string("chat"), user: user)
        case .chatPin, .chatUnpin, .chatArchive, .chatUnarchive, .chatMute, .chatUnmute:
            let id = try reader(["chat"]).string("chat")
            event = switch method {
            case .chatPin: .pinChat(id: id, user: user)
            case .chatUnpin: .unpinChat(id: id, user: user)
            case .chatArchive: .moveChat(id: id, to: .archive, user: user)
            case .chatUnarchive: .moveChat(id: id, to: .main, user: user)
            case .chatMute: .setMuted(id: id, muted: true, user: user)
            default: .setMuted(id: id, muted: false, user: user)
            }
        case .chatSetPinned:
            let reader = try reader(["list", "chats"])
            guard let list = try reader.optionalList("list") else {
                throw .invalidParams(field: "list", reason: "is required")
            }
            event = .setPinned(list: list, chats: try reader.stringArray("chats", count: 0...ChatsLocateParams.maxIDs), user: user)
        case .messagePost:
            let reader = try reader(["chat", "id", "sender", "text", "sentAt"])
            let id = try reader.string("id")
            let chat = try reader.string("chat")
            let sender: String
            if let defaultSender {
                sender = try reader.optionalString("sender") ?? defaultSender
            } else {
                sender = try reader.string("sender")
            }
            event = .postMessage(Message(
                id: id, chat: chat, sender: sender,
                text: try reader.string("text"), sentAt: try reader.int64("sentAt")))
        case .messageEdit:
            let reader = try reader(["id", "text", "editedAt"])
            event = .editMessage(
                id: try reader.string("id"), text: try reader.string("text"),
                editedAt: try reader.optionalInt64("editedAt") ?? now)
        case .messageDelete:
            event = .deleteMessage(id: try reader(["id"]).string("id"))
        default:
            return nil
        }
        try event.validate()
        return event
    }
}
