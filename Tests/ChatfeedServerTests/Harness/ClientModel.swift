import ChatModel
import Foundation
import JSONCodec
import TestSupport
import WireProtocol

/// What the test knows the store must hold after the writes it sent (all through one stdin, so
/// in one order): used to generate writes whose outcome is certain, to check each response, and
/// to check the final chat list (all but `revision`).
struct ClientModel {
    struct ChatState {
        var title: String
        var createdAt: Int64
        var unread: Int64 = 0
        var messages: Set<String> = []
        var list = ChatList.main
        var muted = false
    }

    struct MessageState {
        var chat: String
        var sender: String
        var firstText: String
        var text: String
        var sentAt: Int64
        var deleted = false
        /// Posted since the chat was last read.
        var unread = true
    }

    /// What a write must answer.
    enum Expectation: CustomStringConvertible {
        case chat(String)
        case posted(duplicate: Bool)
        case empty
        case error(Int)

        var description: String {
            switch self {
            case .chat(let id): "the chat \(id)"
            case .posted(let duplicate): "{\"duplicate\":\(duplicate)}"
            case .empty: "{}"
            case .error(let code): "error \(code)"
            }
        }
    }

    /// Prefixes the ids of chats and messages, so that several writers keep to their own.
    let prefix: String
    private(set) var chats: [String: ChatState] = [:]
    private(set) var messages: [String: MessageState] = [:]
    private(set) var clock: Int64 = 1_700_000_000_000
    private var nextChat = 0
    /// Ids of removed chats, which a later `chat.create` may use again.
    private var removedChats: [String] = []
    /// How many chats were removed.
    private(set) var removedCount = 0
    private var nextMessage = 0

    /// Each list's pinned chats, top first.
    private(set) var pins: [ChatList: [String]] = [.main: [], .archive: []]
    /// Whether random writes include pins, archiving and mute.
    let withLists: Bool
    static let maxPinnedChats = 5

    init(prefix: String = "", withLists: Bool = false) {
        self.prefix = prefix
        self.withLists = withLists
    }

    // MARK: The expected list

    func lastMessageID(of chatID: String) -> String? {
        guard let chat = chats[chatID] else { return nil }
        return chat.messages.filter { messages[$0]?.deleted == false }
            .max { a, b in
                let (x, y) = (messages[a]!, messages[b]!)
                return x.sentAt != y.sentAt ? x.sentAt < y.sentAt : Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
            }
    }

    /// The `main` list as it must be, `normalized`.
    var expectedList: [Chat] { expectedList(ChatListView(list: .main)) }

    /// The rows of `view` as they must be, `normalized`: the pins in pin order, then the others.
    func expectedList(_ view: ChatListView) -> [Chat] {
        let rows = chats.compactMap { id, state -> Chat? in
            guard state.list == view.list else { return nil }
            var last: LastMessage?
            if let messageID = lastMessageID(of: id), let message = messages[messageID] {
                last = LastMessage(id: messageID, sender: message.sender, text: message.text, sentAt: message.sentAt)
            }
            let chat = Chat(
                id: id, title: state.title, createdAt: state.createdAt, lastMessage: last,
                lastMessageDate: last?.sentAt ?? state.createdAt, unread: state.unread, revision: 0,
                list: state.list, pinOrder: pins[state.list]!.contains(id) ? 1 : 0, muted: state.muted)
            return view.contains(chat) ? chat : nil
        }
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        return pins[view.list]!.compactMap { byID[$0] } + rows.filter { !$0.pinned }.sorted(by: FeedMirror.precedes)
    }

    /// Every view's rows, as `expectedList(_:)` gives them.
    var expectedViews: [ChatListView: [Chat]] {
        Dictionary(uniqueKeysWithValues: ChatListView.all.map { ($0, expectedList($0)) })
    }

    /// A list's counters, recounted.
    func expectedCounters(_ list: ChatList) -> ListCounters {
        ListCounters.recount(expectedList(ChatListView(list: list)), list: list)
    }

    /// A chat as the model knows it: revision 0, `pinOrder` 1 when pinned (the model checks the
    /// order of pins by the order of rows).
    static func normalized(_ chat: Chat) -> Chat {
        var chat = chat
        chat.revision = 0
        chat.pinOrder = chat.pinned ? 1 : 0
        return chat
    }

    var liveMessageCount: Int {
        chats.values.reduce(0) { total, chat in total + chat.messages.filter { messages[$0]?.deleted == false }.count }
    }

    // MARK: Random writes

    /// One random write (method, params) and what it must answer; the model is updated as the
    /// daemon will be.
    mutating func randomWrite(using generator: inout some RandomNumberGenerator) -> (method: String, params: JSONValue, expect: Expectation) {
        clock += Int64.random(in: 0...2, using: &generator)  // ties happen: the id breaks them
        let roll = Int.random(in: 0..<100, using: &generator)
        let liveChats = chats.keys.sorted()
        if liveChats.count < 4 || roll < 8 { return createChat(using: &generator) }
        let chatID = liveChats.randomElement(using: &generator)!
        let live = chats[chatID]!.messages.sorted().filter { !messages[$0]!.deleted }
        if withLists, Int.random(in: 0..<100, using: &generator) < 16 { return listWrite(chatID, using: &generator) }
        switch roll {
        case ..<45:
            // A new message; one in five arrives late (older than the chat's last, maybe older than the chat).
            let late = Int.random(in: 0..<5, using: &generator) == 0
            let sentAt = late ? clock - Int64.random(in: 1...400, using: &generator) : clock
            return post(chat: chatID, sender: ["ann", "bob", "zoë"].randomElement(using: &generator)!, sentAt: sentAt, using: &generator)
        case ..<50:
            // A repost of an existing message with its first content (even edited or deleted since).
            guard let id = chats[chatID]!.messages.sorted().randomElement(using: &generator) else { return createChat(using: &generator) }
            let message = messages[id]!
            return ("message.post", [
                "chat": .string(message.chat), "id": .string(id), "sender": .string(message.sender),
                "text": .string(message.firstText), "sentAt": .integer(message.sentAt),
            ], .posted(duplicate: true))
        case ..<60:
            // An edit, of the last message most of the time (the row changes).
            let target = Int.random(in: 0..<3, using: &generator) > 0 ? lastMessageID(of: chatID) : live.randomElement(using: &generator)
            guard let id = target else { return rename(chatID, using: &generator) }
            let text = Self.text(using: &generator)
            messages[id]!.text = text
            return ("message.edit", ["id": .string(id), "text": .string(text), "editedAt": .integer(clock)], .empty)
        case ..<72:
            // A delete, of the last message most of the time: the chat may move down.
            let target = Int.random(in: 0..<4, using: &generator) > 0 ? lastMessageID(of: chatID) : live.randomElement(using: &generator)
            guard let id = target else { return rename(chatID, using: &generator) }
            messages[id]!.deleted = true
            if messages[id]!.unread {
                messages[id]!.unread = false
                chats[chatID]!.unread -= 1
            }
            return ("message.delete", ["id": .string(id)], .empty)
        case ..<78:
            return rename(chatID, using: &generator)
        case ..<87:
            chats[chatID]!.unread = 0
            for id in chats[chatID]!.messages { messages[id]!.unread = false }
            return ("chat.markRead", ["chat": .string(chatID)], .chat(chatID))
        case ..<93:
            pins[chats[chatID]!.list]!.removeAll { $0 == chatID }
            for id in chats[chatID]!.messages { messages[id] = nil }
            chats[chatID] = nil
            removedChats.append(chatID)
            removedCount += 1
            return ("chat.remove", ["chat": .string(chatID)], .empty)
        case ..<96:
            // A write that fails inside a group commit: a message to a chat that does not exist.
            nextMessage += 1
            return ("message.post", [
                "chat": "no-such-chat", "id": .string("\(prefix)x\(nextMessage)"), "sender": "ann", "text": "lost",
                "sentAt": .integer(clock),
            ], .error(-32001))
        default:
            // A conflicting repost: same id, other text.
            guard let id = chats[chatID]!.messages.sorted().randomElement(using: &generator) else { return createChat(using: &generator) }
            let message = messages[id]!
            return ("message.post", [
                "chat": .string(message.chat), "id": .string(id), "sender": .string(message.sender),
                "text": .string(message.firstText + " (changed)"), "sentAt": .integer(message.sentAt),
            ], .error(-32002))
        }
    }

    /// A pin, unpin, setPinned, archive, unarchive, mute or unmute of `chatID`, or of its list.
    mutating func listWrite(_ chatID: String, using generator: inout some RandomNumberGenerator) -> (method: String, params: JSONValue, expect: Expectation) {
        let list = chats[chatID]!.list
        let params: JSONValue = ["chat": .string(chatID)]
        switch Int.random(in: 0..<100, using: &generator) {
        case ..<30:
            if pins[list]!.contains(chatID) { return ("chat.pin", params, .chat(chatID)) }
            guard pins[list]!.count < Self.maxPinnedChats else { return ("chat.pin", params, .error(-32002)) }
            pins[list]!.insert(chatID, at: 0)
            return ("chat.pin", params, .chat(chatID))
        case ..<45:
            pins[list]!.removeAll { $0 == chatID }
            return ("chat.unpin", params, .chat(chatID))
        case ..<60:
            // The list's pins reordered, some dropped, maybe a new one; now and then a chat of the
            // other list, which is invalid and changes nothing.
            var chosen = pins[list]!.shuffled(using: &generator).filter { _ in Int.random(in: 0..<5, using: &generator) > 0 }
            if chosen.count < Self.maxPinnedChats, !chosen.contains(chatID) { chosen.insert(chatID, at: Int.random(in: 0...chosen.count, using: &generator)) }
            let stranger = chats.keys.sorted().first { chats[$0]!.list != list }
            let params: JSONValue = ["list": .string(list.rawValue), "chats": .array(chosen.map { .string($0) })]
            if let stranger, Int.random(in: 0..<8, using: &generator) == 0 {
                return ("chat.setPinned", ["list": .string(list.rawValue), "chats": .array((chosen + [stranger]).map { .string($0) })], .error(-32602))
            }
            pins[list] = chosen
            return ("chat.setPinned", params, .empty)
        case ..<80:
            let target = list.other
            if pins[list]!.contains(chatID) { pins[list]!.removeAll { $0 == chatID } }
            chats[chatID]!.list = target
            return (target == .archive ? "chat.archive" : "chat.unarchive", params, .chat(chatID))
        default:
            chats[chatID]!.muted.toggle()
            return (chats[chatID]!.muted ? "chat.mute" : "chat.unmute", params, .chat(chatID))
        }
    }

    mutating func createChat(using generator: inout some RandomNumberGenerator) -> (method: String, params: JSONValue, expect: Expectation) {
        let id: String
        if !removedChats.isEmpty, Int.random(in: 0..<3, using: &generator) == 0 {
            // A removed chat's id again: a new chat, which must not be confused with the old one.
            id = removedChats.remove(at: Int.random(in: 0..<removedChats.count, using: &generator))
        } else {
            nextChat += 1
            // Ids whose bytewise order differs from their numeric order, and mixed case.
            id = prefix + ["c", "C", "chat-", "_"].randomElement(using: &generator)! + String(nextChat)
        }
        let createdAt = Bool.random(using: &generator) ? clock : clock - Int64.random(in: 0...600, using: &generator)
        let title = "Chat \(id) \(Self.text(using: &generator))"
        chats[id] = ChatState(title: title, createdAt: createdAt)
        pins[.main]!.removeAll { $0 == id }
        pins[.archive]!.removeAll { $0 == id }
        return ("chat.create", ["chat": .string(id), "title": .string(title), "createdAt": .integer(createdAt)], .chat(id))
    }

    mutating func post(chat: String, sender: String, sentAt: Int64, using generator: inout some RandomNumberGenerator) -> (method: String, params: JSONValue, expect: Expectation) {
        nextMessage += 1
        let id = "\(prefix)m\(nextMessage)"
        let text = Self.text(using: &generator)
        messages[id] = MessageState(chat: chat, sender: sender, firstText: text, text: text, sentAt: sentAt)
        chats[chat]!.messages.insert(id)
        chats[chat]!.unread += 1
        return ("message.post", [
            "chat": .string(chat), "id": .string(id), "sender": .string(sender), "text": .string(text),
            "sentAt": .integer(sentAt),
        ], .posted(duplicate: false))
    }

    mutating func rename(_ chatID: String, using generator: inout some RandomNumberGenerator) -> (method: String, params: JSONValue, expect: Expectation) {
        let title = "Renamed \(Self.text(using: &generator))"
        chats[chatID]!.title = title
        return ("chat.rename", ["chat": .string(chatID), "title": .string(title)], .chat(chatID))
    }

    static func text(using generator: inout some RandomNumberGenerator) -> String {
        let words = ["hi", "ok", "lunch?", "see you", "\"quoted\"", "back\\slash", "line\nbreak", "tab\there", "héllo", "🎉", "日本語", "\u{1}"]
        return (0..<Int.random(in: 1...3, using: &generator)).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ")
    }

    /// Checks a write's reply against its expectation.
    static func check(_ reply: Reply, against expectation: Expectation, method: String, params: JSONValue) throws {
        let context = "\(method) \(params): expected \(expectation), got \(reply)"
        switch (expectation, reply) {
        case (.chat(let id), .result(let result)):
            guard (try? Chat(jsonValue: result))?.id == id else { throw HarnessError(context) }
        case (.posted(let duplicate), .result(let result)):
            guard result == ["duplicate": .bool(duplicate)] else { throw HarnessError(context) }
        case (.empty, .result(let result)):
            guard result == [:] else { throw HarnessError(context) }
        case (.error(let code), .error(let failure)):
            guard failure.code == code else { throw HarnessError(context) }
        default:
            throw HarnessError(context)
        }
    }
}

extension Daemon {
    /// Sends 1…`most` random writes of `model` in one pipe write, then checks every reply against
    /// the model; returns how many it sent.
    func writeRandomGroup(
        of model: inout ClientModel, most: Int, using random: inout some RandomNumberGenerator
    ) throws -> Int {
        var pending: [(id: JSONValue, write: (method: String, params: JSONValue, expect: ClientModel.Expectation))] = []
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 1...most, using: &random) {
            let write = model.randomWrite(using: &random)
            let id = makeID()
            bytes += Daemon.line(id: id, method: write.method, params: write.params)
            pending.append((id, write))
        }
        send(raw: bytes)
        for (id, write) in pending {
            try ClientModel.check(try reply(to: id), against: write.expect, method: write.method, params: write.params)
        }
        return pending.count
    }
}
