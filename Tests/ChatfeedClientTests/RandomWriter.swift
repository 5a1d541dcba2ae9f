import ChatfeedClient
import ChatModel
import TestSupport

/// Random writes through the client's typed calls, chosen so that each must succeed: new chats
/// (some created in the past), messages that bump a chat, late messages, edits, deleted (last)
/// messages, renames, reads, pins (one at a time and whole sets), archiving, mute, removed chats.
struct RandomWriter {
    private var chats: [String] = []
    private var messages: [(id: String, chat: String)] = []
    private var archived: Set<String> = []
    private var pinned: [ChatList: [String]] = [:]
    private var muted: Set<String> = []
    private var next = 0
    private var clock: Int64 = 1_000_000
    /// `maxPinnedChats` of the default configuration.
    private static let maxPinned = 5

    mutating func write(to client: ChatClient, using generator: inout SeededGenerator) async throws {
        next += 1
        clock += Int64.random(in: 1...5, using: &generator)
        let roll = Int.random(in: 0..<100, using: &generator)
        if chats.count < 4 || roll < 10 {
            let id = "c\(next)"
            let createdAt = roll % 2 == 0 ? clock : clock - Int64.random(in: 0...5_000, using: &generator)
            try await client.createChat(id, title: roll % 3 == 0 ? "日本語のチャット \(next) 🎉" : "chat \(next)", createdAt: createdAt)
            chats.append(id)
            return
        }
        let chat = chats.randomElement(using: &generator)!
        let list: ChatList = archived.contains(chat) ? .archive : .main
        switch roll {
        case ..<52:
            let late = roll < 16
            let id = "m\(next)"
            let sentAt = late ? clock - Int64.random(in: 100...10_000, using: &generator) : clock
            let result = try await client.postMessage(chat: chat, id: id, sender: "ann", text: "hello \(next)", sentAt: sentAt)
            precondition(!result.duplicate)
            messages.append((id, chat))
        case ..<58 where !messages.isEmpty:
            try await client.editMessage(messages.randomElement(using: &generator)!.id, text: "edited \(next)")
        case ..<66 where !messages.isEmpty:
            let index = Int.random(in: messages.indices, using: &generator)
            try await client.deleteMessage(messages.remove(at: index).id)
        case ..<71:
            try await client.renameChat(chat, title: "renamed \(next)")
        case ..<80:
            try await client.markChatRead(chat)
        case ..<84:
            if let position = pinned[list, default: []].firstIndex(of: chat) {
                pinned[list]!.remove(at: position)
                try await client.unpinChat(chat)
            } else if pinned[list, default: []].count < Self.maxPinned {
                pinned[list, default: []].insert(chat, at: 0)
                try await client.pinChat(chat)
            }
        case ..<86:
            let candidates = chats.filter { !archived.contains($0) }.shuffled(using: &generator)
            let pins = Array(candidates.prefix(Int.random(in: 0...Self.maxPinned, using: &generator)))
            pinned[.main] = pins
            try await client.setPinnedChats(pins, in: .main)
        case ..<90:
            pinned[list]?.removeAll { $0 == chat }
            if archived.remove(chat) != nil {
                try await client.unarchiveChat(chat)
            } else {
                archived.insert(chat)
                try await client.archiveChat(chat)
            }
        case ..<94:
            if muted.remove(chat) != nil {
                try await client.unmuteChat(chat)
            } else {
                muted.insert(chat)
                try await client.muteChat(chat)
            }
        default:
            try await client.removeChat(chat)
            chats.removeAll { $0 == chat }
            messages.removeAll { $0.chat == chat }
            archived.remove(chat)
            muted.remove(chat)
            for list in ChatList.allCases { pinned[list]?.removeAll { $0 == chat } }
        }
    }
}
