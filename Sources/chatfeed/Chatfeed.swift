import ArgumentParser
import ChatfeedConfig
import ChatModel
import ChatStore
import Foundation
import WireProtocol
import SQLite

@main
struct Chatfeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chatfeed",
        abstract: "Create, write and query a chatfeed store.",
        version: ChatfeedVersion.current,
        subcommands: [
            Init.self, UserCommand.self, ChatCommand.self, Send.self, Edit.self, Delete.self, Chats.self, Messages.self, Locate.self, Stats.self,
            Diff.self, Watch.self, Token.self,
        ])

    /// Usage errors keep argument-parser's conventions (`Error: …`, the usage and a pointer to
    /// `--help` on stderr, exit status 64); every other failure is one `chatfeed: error: …` line
    /// on stderr and exit status 1.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as CLIFailure {
            FileHandle.standardError.write(Data("chatfeed: error: \(TerminalText.sanitized(error.message))\n".utf8))
            Foundation.exit(1)
        } catch {
            exit(withError: error)
        }
    }
}

/// A failure reported as one line on stderr.
struct CLIFailure: Error {
    var message: String
}

/// Runs `body`, turning store and database errors into a `CLIFailure` that says what was wrong.
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CLIFailure {
        throw error
    } catch let error as ChatError {
        throw CLIFailure(message: error.description)
    } catch let error as SQLiteError {
        throw CLIFailure(message: error.isBusy
            ? "the database is locked by another process (waited for the busy timeout): \(error.message)"
            : error.description)
    } catch {
        throw CLIFailure(message: "\(error)")
    }
}

/// Writes `text` and a newline to stdout.
func output(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

