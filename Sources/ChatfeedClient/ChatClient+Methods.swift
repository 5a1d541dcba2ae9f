import ChatModel
import JSONCodec
import WireProtocol

/// Typed calls, one per method of docs/PROTOCOL.md. Each throws `ChatfeedError` when the engine answers an
/// error (its code, message and field), `ChatfeedClientError` when the connection fails.
extension ChatClient {
    // MARK: Writes (answered once committed)

    /// `user.create` (trusted sessions only); `name` defaults to the id, `createdAt` to the
    /// engine's clock. Throws `.conflict` when the user exists.
    @discardableResult
    public func createUser(_ id: String, name: String? = nil, createdAt: Int64? = nil) async throws -> User {
        let result = try await call(.createUser(id: id, name: name, createdAt: createdAt))
        return try decoded(.userCreate) { () throws(WireDecodingError) in try WireResults.decodeUser(result) }
    }

    /// `user.remove` (trusted sessions only): the user and their memberships; their messages stay.
    public func removeUser(_ id: String) async throws {
        _ = try await call(.removeUser(id: id))
    }

    /// `chat.create`; `createdAt` defaults to the engine's clock, `members` (user ids) to the
    /// acting user alone. The chat as the acting user sees it.
    @discardableResult
    public func createChat(
        _ id: String, title: String, createdAt: Int64? = nil, members: [String]? = nil
    ) async throws -> Chat {
        try await chatCall(.createChat(id: id, title: title, createdAt: createdAt, members: members))
    }

    /// `chat.addMembers`: each user joins the chat (in `main`, nothing unread); members keep their row.
    public func addMembers(_ users: [String], to chat: String) async throws {
        _ = try await call(.addMembers(chat: chat, users: users))
    }

    /// `chat.removeMembers`: each user leaves the chat (a user leaving names themselves).
    public func removeMembers(_ users: [String], from chat: String) async throws {
        _ = try await call(.removeMembers(chat: chat, users: users))
    }

    /// `chat.rename`.
    @discardableResult
    public func renameChat(_ id: String, title: String) async throws -> Chat {
        try await chatCall(.renameChat(id: id, title: title))
    }

    /// `chat.remove`: the chat and its messages.
    public func removeChat(_ id: String) async throws {
        _ = try await call(.chat(.chatRemove, id: id))
    }

    /// `chat.markRead`: unread becomes 0.
    @discardableResult
    public func markChatRead(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatMarkRead, id: id))
    }

    /// `chat.pin`: on top of its list's pinned chats. Throws `.conflict` when the list already has
    /// `maxPinnedChats` pins.
    @discardableResult
    public func pinChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatPin, id: id))
    }

    /// `chat.unpin`: back to its place by date.
    @discardableResult
    public func unpinChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatUnpin, id: id))
    }

    /// `chat.setPinned`: pins exactly `chats` of `list`, top first, and unpins the list's others.
    public func setPinnedChats(_ chats: [String], in list: ChatList = .main) async throws {
        _ = try await call(.setPinned(list: list, chats: chats))
    }

    /// `chat.archive`: to the archive list, unpinned.
    @discardableResult
    public func archiveChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatArchive, id: id))
    }

    /// `chat.unarchive`: back to the main list, unpinned.
    @discardableResult
    public func unarchiveChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatUnarchive, id: id))
    }

    /// `chat.mute`: its unread messages no longer count in the list's `unmuted…` counters.
    @discardableResult
    public func muteChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatMute, id: id))
    }

    /// `chat.unmute`.
    @discardableResult
    public func unmuteChat(_ id: String) async throws -> Chat {
        try await chatCall(.chat(.chatUnmute, id: id))
    }

    /// `message.post`. Posting the same message again is a no-op (`duplicate`).
    @discardableResult
    public func postMessage(
        chat: String, id: String, sender: String, text: String, sentAt: Int64
    ) async throws -> PostResult {
        let result = try await call(.postMessage(Message(id: id, chat: chat, sender: sender, text: text, sentAt: sentAt)))
        return PostResult(duplicate: try decoded(.messagePost) { () throws(WireDecodingError) in try WireResults.decodePost(result) })
    }

    /// `message.edit`; `editedAt` defaults to the engine's clock.
    public func editMessage(_ id: String, text: String, editedAt: Int64? = nil) async throws {
        _ = try await call(.editMessage(id: id, text: text, editedAt: editedAt))
    }

    /// `message.delete`.
    public func deleteMessage(_ id: String) async throws {
        _ = try await call(.deleteMessage(id: id))
    }

    // MARK: Reads

    /// `chats.list`: `limit` chats of `list` from `offset` (indices in the list's order, or among
    /// its chats with unread messages when `unreadOnly`), with the list's counters.
    public func listChats(
        list: ChatList = .main, unreadOnly: Bool = false, offset: Int = 0, limit: Int = 100
    ) async throws -> ChatPage {
        let request = WireRequest.listChats(
            ChatsListParams(view: ChatListView(list: list, unreadOnly: unreadOnly), offset: offset, limit: limit))
        let result = try await call(request)
        let page = try decoded(.chatsList) { () throws(WireDecodingError) in try WireResults.decodeChatsList(result) }
        return ChatPage(total: page.total, unread: page.unread, items: page.items)
    }

    /// `chats.locate`: the current index of each id in `list` (the full list, unfiltered).
    public func locateChats(_ ids: [String], in list: ChatList = .main) async throws -> ChatLocations {
        let result = try await call(.locateChats(ChatsLocateParams(ids: ids, list: list)))
        let located = try decoded(.chatsLocate) { () throws(WireDecodingError) in try WireResults.decodeChatsLocate(result) }
        return ChatLocations(total: located.total, indices: located.indices)
    }

    /// `messages.list`: newest first, those sent before `before` when given; `cursor` (a page's
    /// `nextCursor`) continues exactly after that page.
    public func listMessages(
        chat: String, before: Int64? = nil, cursor: String? = nil, limit: Int = 50
    ) async throws -> MessageListPage {
        let result = try await call(.listMessages(chat: chat, before: before, cursor: cursor, limit: limit))
        let page = try decoded(.messagesList) { () throws(WireDecodingError) in try WireResults.decodeMessagesList(result) }
        return MessageListPage(items: page.items, nextCursor: page.nextCursor)
    }

    /// `chat.members`: the members' user ids, bytewise.
    public func members(of chat: String) async throws -> [String] {
        let result = try await call(.members(chat: chat))
        return try decoded(.chatMembers) { () throws(WireDecodingError) in try WireResults.decodeMembers(result) }
    }

    /// `server.stats`: the store's counts and the engine's subscriptions.
    public func stats() async throws -> ServerStats {
        let value = try await call(.stats)
        return try decoded(.serverStats) { () throws(WireDecodingError) in try ServerStats(jsonValue: value) }
    }

    /// `server.version`: the server's release and the version of its protocol.
    public func serverVersion() async throws -> ServerVersion {
        let value = try await call(.version)
        return try decoded(.serverVersion) { () throws(WireDecodingError) in try ServerVersion(jsonValue: value) }
    }

    // MARK: Plumbing

    private func chatCall(_ request: WireRequest) async throws -> Chat {
        let result = try await call(request)
        return try decoded(request.method) { () throws(WireDecodingError) in try WireResults.decodeChat(result) }
    }

    /// A result decoded by the wire layer; an unreadable one is `malformedResponse`.
    private func decoded<T>(_ method: WireMethod, _ decode: () throws(WireDecodingError) -> T) throws(ChatfeedClientError) -> T {
        do { return try decode() } catch {
            throw .malformedResponse(method: method.rawValue, reason: "\(error)")
        }
    }
}
