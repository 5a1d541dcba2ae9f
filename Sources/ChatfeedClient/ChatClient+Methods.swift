import ChatModel
import JSONCodec
import WireProtocol

/// Typed calls, one per method of SPEC §5. Each throws `ChatfeedError` when the engine answers an
/// error (its code, message and field), `ChatfeedClientError` when the connection fails.
extension ChatClient {
    // MARK: Writes (answered once committed)

    /// `chat.create`; `createdAt` defaults to the engine's clock.
    @discardableResult
    public func createChat(_ id: String, title: String, createdAt: Int64? = nil) async throws -> Chat {
        var params: JSONObject = ["chat": .string(id), "title": .string(title)]
        if let createdAt { params.append("createdAt", .integer(createdAt)) }
        return try await chatCall(.chatCreate, params)
    }

    /// `chat.rename`.
    @discardableResult
    public func renameChat(_ id: String, title: String) async throws -> Chat {
        try await chatCall(.chatRename, ["chat": .string(id), "title": .string(title)])
    }

    /// `chat.remove`: the chat and its messages.
    public func removeChat(_ id: String) async throws {
        _ = try await call(.chatRemove, ["chat": .string(id)])
    }

    /// `chat.markRead`: unread becomes 0.
    @discardableResult
    public func markChatRead(_ id: String) async throws -> Chat {
        try await chatCall(.chatMarkRead, ["chat": .string(id)])
    }

    /// `chat.pin`: on top of its list's pinned chats. Throws `.conflict` when the list already has
    /// `maxPinnedChats` pins.
    @discardableResult
    public func pinChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatPin, ["chat": .string(id)])
    }

    /// `chat.unpin`: back to its place by date.
    @discardableResult
    public func unpinChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatUnpin, ["chat": .string(id)])
    }

    /// `chat.setPinned`: pins exactly `chats` of `list`, top first, and unpins the list's others.
    public func setPinnedChats(_ chats: [String], in list: ChatList = .main) async throws {
        _ = try await call(.chatSetPinned, ["list": .string(list.rawValue), "chats": .array(chats.map(JSONValue.string))])
    }

    /// `chat.archive`: to the archive list, unpinned.
    @discardableResult
    public func archiveChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatArchive, ["chat": .string(id)])
    }

    /// `chat.unarchive`: back to the main list, unpinned.
    @discardableResult
    public func unarchiveChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatUnarchive, ["chat": .string(id)])
    }

    /// `chat.mute`: its unread messages no longer count in the list's `unmuted…` counters.
    @discardableResult
    public func muteChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatMute, ["chat": .string(id)])
    }

    /// `chat.unmute`.
    @discardableResult
    public func unmuteChat(_ id: String) async throws -> Chat {
        try await chatCall(.chatUnmute, ["chat": .string(id)])
    }

    /// `message.post`. Posting the same message again is a no-op (`duplicate`).
    @discardableResult
    public func postMessage(
        chat: String, id: String, sender: String, text: String, sentAt: Int64
    ) async throws -> PostResult {
        let result = try await call(.messagePost, [
            "chat": .string(chat), "id": .string(id), "sender": .string(sender), "text": .string(text),
            "sentAt": .integer(sentAt),
        ])
        guard let duplicate = result["duplicate"]?.boolValue else {
            throw ChatfeedClientError.malformedResponse(method: "message.post", reason: "'duplicate' is missing")
        }
        return PostResult(duplicate: duplicate)
    }

    /// `message.edit`; `editedAt` defaults to the engine's clock.
    public func editMessage(_ id: String, text: String, editedAt: Int64? = nil) async throws {
        var params: JSONObject = ["id": .string(id), "text": .string(text)]
        if let editedAt { params.append("editedAt", .integer(editedAt)) }
        _ = try await call(.messageEdit, params)
    }

    /// `message.delete`.
    public func deleteMessage(_ id: String) async throws {
        _ = try await call(.messageDelete, ["id": .string(id)])
    }

    // MARK: Reads

    /// `chats.list`: `limit` chats of `list` from `offset` (indices in the list's order, or among
    /// its chats with unread messages when `unreadOnly`), with the list's counters.
    public func listChats(
        list: ChatList = .main, unreadOnly: Bool = false, offset: Int = 0, limit: Int = 100
    ) async throws -> ChatPage {
        var params: JSONObject = ["offset": .integer(offset), "limit": .integer(limit)]
        if list != .main { params.append("list", .string(list.rawValue)) }
        if unreadOnly { params.append("unreadOnly", .bool(true)) }
        let reader = ResultReader(method: "chats.list", value: try await call(.chatsList, params))
        return ChatPage(total: try reader.int("total"), unread: try reader.unread(), items: try reader.chats("items"))
    }

    /// `chats.locate`: the current index of each id in `list` (the full list, unfiltered).
    public func locateChats(_ ids: [String], in list: ChatList = .main) async throws -> ChatLocations {
        var params: JSONObject = ["ids": .array(ids.map(JSONValue.string))]
        if list != .main { params.append("list", .string(list.rawValue)) }
        let reader = ResultReader(method: "chats.locate", value: try await call(.chatsLocate, params))
        guard let object = reader.value["indices"]?.objectValue else { throw reader.fail("'indices' is missing") }
        var indices: [String: Int] = [:]
        for (id, index) in object { if let index = index.int64Value { indices[id] = Int(index) } }
        return ChatLocations(total: try reader.int("total"), indices: indices)
    }

    /// `messages.list`: newest first, those sent before `before` when given; `cursor` (a page's
    /// `nextCursor`) continues exactly after that page.
    public func listMessages(
        chat: String, before: Int64? = nil, cursor: String? = nil, limit: Int = 50
    ) async throws -> MessageListPage {
        var params: JSONObject = ["chat": .string(chat), "limit": .integer(limit)]
        if let before { params.append("before", .integer(before)) }
        if let cursor { params.append("cursor", .string(cursor)) }
        let reader = ResultReader(method: "messages.list", value: try await call(.messagesList, params))
        return MessageListPage(items: try reader.messages("items"), nextCursor: reader.value["nextCursor"]?.stringValue)
    }

    /// `server.stats`: the store's counts and the engine's subscriptions.
    public func stats() async throws -> ServerStats {
        let value = try await call(.serverStats, [:])
        do {
            return try ServerStats(jsonValue: value)
        } catch {
            throw ChatfeedClientError.malformedResponse(method: WireMethod.serverStats.rawValue, reason: "\(error)")
        }
    }

    /// `server.version`: the server's release and the version of its protocol.
    public func serverVersion() async throws -> ServerVersion {
        let value = try await call(.serverVersion, [:])
        do {
            return try ServerVersion(jsonValue: value)
        } catch {
            throw ChatfeedClientError.malformedResponse(method: WireMethod.serverVersion.rawValue, reason: "\(error)")
        }
    }

    // MARK: Plumbing

    func call(_ method: WireMethod, _ params: JSONObject) async throws -> JSONValue {
        try await call(method.rawValue, params)
    }

    private func chatCall(_ method: WireMethod, _ params: JSONObject) async throws -> Chat {
        try ResultReader(method: method.rawValue, value: try await call(method, params)).chat()
    }
}
