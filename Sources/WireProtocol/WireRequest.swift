import ChatModel
import JSONCodec

/// A request a client sends, with typed params: its method and its params object, spelled here so
/// that clients (ChatfeedClient, the CLI) build no JSON keys of their own. The engine decodes the
/// same params with `WireCommand`.
public enum WireRequest: Hashable, Sendable {
    /// `user.create`; `name` nil: the id; `createdAt` nil: the engine's clock.
    case createUser(id: String, name: String?, createdAt: Int64?)
    case removeUser(id: String)
    /// `chat.create`; `createdAt` nil: the engine's clock; `members` nil: the acting user alone.
    case createChat(id: String, title: String, createdAt: Int64?, members: [String]? = nil)
    case addMembers(chat: String, users: [String])
    case removeMembers(chat: String, users: [String])
    case members(chat: String)
    case renameChat(id: String, title: String)
    /// A method whose only param is `chat`: `chat.remove`, `chat.markRead`, `chat.pin`,
    /// `chat.unpin`, `chat.archive`, `chat.unarchive`, `chat.mute`, `chat.unmute`.
    case chat(WireMethod, id: String)
    case setPinned(list: ChatList, chats: [String])
    case postMessage(Message)
    /// `message.edit`; `editedAt` nil: the engine's clock.
    case editMessage(id: String, text: String, editedAt: Int64?)
    case deleteMessage(id: String)
    case listChats(ChatsListParams)
    case locateChats(ChatsLocateParams)
    /// `messages.list`; `cursor` is a page's `nextCursor`.
    case listMessages(chat: String, before: Int64?, cursor: String?, limit: Int)
    case subscribe(FeedSubscribeParams)
    case ack(FeedAckParams)
    case unsubscribe(FeedUnsubscribeParams)
    case stats
    case version

    public var method: WireMethod {
        switch self {
        case .createUser: .userCreate
        case .removeUser: .userRemove
        case .createChat: .chatCreate
        case .addMembers: .chatAddMembers
        case .removeMembers: .chatRemoveMembers
        case .members: .chatMembers
        case .renameChat: .chatRename
        case .chat(let method, _): method
        case .setPinned: .chatSetPinned
        case .postMessage: .messagePost
        case .editMessage: .messageEdit
        case .deleteMessage: .messageDelete
        case .listChats: .chatsList
        case .locateChats: .chatsLocate
        case .listMessages: .messagesList
        case .subscribe: .feedSubscribe
        case .ack: .feedAck
        case .unsubscribe: .feedUnsubscribe
        case .stats: .serverStats
        case .version: .serverVersion
        }
    }

    /// The params object (members left out when they have their default).
    public var params: JSONObject {
        var params = JSONObject()
        switch self {
        case .createUser(let id, let name, let createdAt):
            params = [WireMethod.userParam: .string(id)]
            if let name { params.append("name", .string(name)) }
            if let createdAt { params.append("createdAt", .integer(createdAt)) }
        case .removeUser(let id):
            params = [WireMethod.userParam: .string(id)]
        case .createChat(let id, let title, let createdAt, let members):
            params = ["chat": .string(id), "title": .string(title)]
            if let createdAt { params.append("createdAt", .integer(createdAt)) }
            if let members { params.append("members", .array(members.map(JSONValue.string))) }
        case .addMembers(let chat, let users), .removeMembers(let chat, let users):
            params = ["chat": .string(chat), "users": .array(users.map(JSONValue.string))]
        case .members(let chat):
            params = ["chat": .string(chat)]
        case .renameChat(let id, let title):
            params = ["chat": .string(id), "title": .string(title)]
        case .chat(_, let id):
            params = ["chat": .string(id)]
        case .setPinned(let list, let chats):
            params = ["list": .string(list.rawValue), "chats": .array(chats.map(JSONValue.string))]
        case .postMessage(let message):
            params = [
                "chat": .string(message.chat), "id": .string(message.id), "sender": .string(message.sender),
                "text": .string(message.text), "sentAt": .integer(message.sentAt),
            ]
        case .editMessage(let id, let text, let editedAt):
            params = ["id": .string(id), "text": .string(text)]
            if let editedAt { params.append("editedAt", .integer(editedAt)) }
        case .deleteMessage(let id):
            params = ["id": .string(id)]
        case .listChats(let list):
            params = ["offset": .integer(list.offset), "limit": .integer(list.limit)]
            if list.view.list != .main { params.append("list", .string(list.view.list.rawValue)) }
            if list.view.unreadOnly { params.append("unreadOnly", .bool(true)) }
        case .locateChats(let locate):
            params = ["ids": .array(locate.ids.map(JSONValue.string))]
            if locate.list != .main { params.append("list", .string(locate.list.rawValue)) }
        case .listMessages(let chat, let before, let cursor, let limit):
            params = ["chat": .string(chat), "limit": .integer(limit)]
            if let before { params.append("before", .integer(before)) }
            if let cursor { params.append("cursor", .string(cursor)) }
        case .subscribe(let subscribe):
            if subscribe.view.list != .main { params.append("list", .string(subscribe.view.list.rawValue)) }
            if subscribe.view.unreadOnly { params.append("unreadOnly", .bool(true)) }
            if let limit = subscribe.limit { params.append("limit", .integer(limit)) }
            if let maxInFlight = subscribe.maxInFlight { params.append("maxInFlight", .integer(maxInFlight)) }
            if let known = subscribe.known {
                params.append("known", .array(known.map { .object(["id": .string($0.id), "revision": .integer($0.revision)]) }))
            }
        case .ack(let ack):
            params = ["subscription": .string(ack.subscription), "seq": .integer(ack.seq)]
        case .unsubscribe(let unsubscribe):
            params = ["subscription": .string(unsubscribe.subscription)]
        case .stats, .version:
            break
        }
        return params
    }

    /// The params object acting as `user` (docs/PROTOCOL.md, Users and sessions): with the
    /// `user` param when one is given and the method takes an acting user.
    public func params(actingAs user: String?) -> JSONObject {
        var params = self.params
        if let user, method.takesActingUser { params.append(WireMethod.userParam, .string(user)) }
        return params
    }
}
