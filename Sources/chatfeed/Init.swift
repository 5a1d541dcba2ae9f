import ArgumentParser
import Foundation

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the database, or bring an existing one to the current schema.")

    @OptionGroup var store: StoreSelection

    func run() throws {
        let path = try reportingFailures { try store.resolve().path }
        let existed = FileManager.default.fileExists(atPath: path)
        let opened = try store.openStore(create: true)
        let chats = try reportingFailures { try opened.chatCount() }
        output(existed ? "\(path): ready, \(chats) chats" : "\(path): created")
    }
}
