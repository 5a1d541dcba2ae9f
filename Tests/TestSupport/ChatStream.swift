import ChatModel

/// Random committed changes to a chat list, as the store would report them: new chats, messages
/// that bump a chat to the top, late messages, deleted last messages, renames, reads, removals.
public struct ChatStream {
    public private(set) var chats: [String: Chat] = [:]
    private var nextChat = 0
    private var clock: Int64 = 1_000

    public init() {}

    /// The chat list in SPEC order.
    public var list: [Chat] { chats.values.sorted { $0.orderKey < $1.orderKey } }

    /// One committed group of 1…`maxChanges` changes.
    public mutating func nextGroup(maxChanges: Int, using generator: inout some RandomNumberGenerator) -> [ChatChange] {
        (0..<Int.random(in: 1...maxChanges, using: &generator)).map { _ in nextChange(using: &generator) }
    }

    public mutating func nextChange(using generator: inout some RandomNumberGenerator) -> ChatChange {
        clock += Int64.random(in: 1...3, using: &generator)
        let roll = Int.random(in: 0..<100, using: &generator)
        if chats.count < 3 || roll < 12 {
            let id = "c\(nextChat)"
            nextChat += 1
            // Some new chats are created "in the past", so they do not arrive at the top.
            let createdAt = roll % 2 == 0 ? clock : clock - Int64.random(in: 0...500, using: &generator)
            return record(Chat(id: id, title: "chat \(id)", createdAt: createdAt, lastMessage: nil,
                               lastMessageDate: createdAt, unread: 0, revision: 1))
        }
        // From the ids in order, not from the dictionary, whose order changes with every process:
        // the same seed gives the same stream.
        var chat = chats[chats.keys.sorted().randomElement(using: &generator)!]!
        chat.revision += 1
        switch roll {
        case ..<50:  // a new message: the chat goes to the top
            chat.lastMessage = LastMessage(id: "m\(clock)", sender: "ann", text: "hi \(clock)", sentAt: clock)
            chat.lastMessageDate = clock
            chat.unread += 1
        case ..<60:  // a late message: counted, does not move
            chat.unread += 1
        case ..<70:  // the last message deleted: the chat may move down
            chat.lastMessageDate -= Int64.random(in: 0...200, using: &generator)
            chat.lastMessage = nil
        case ..<80:
            chat.title += "!"
        case ..<90:
            chat.unread = 0
        default:
            chats[chat.id] = nil
            return ChatChange(chatID: chat.id, chat: nil)
        }
        return record(chat)
    }

    private mutating func record(_ chat: Chat) -> ChatChange {
        chats[chat.id] = chat
        return ChatChange(chatID: chat.id, chat: chat)
    }
}
