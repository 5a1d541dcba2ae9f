import Testing
@testable import WireProtocol
import TestSupport

@Suite struct LineFramerTests {
    private func lines(_ strings: String...) -> [LineFramer.Output] { strings.map { .line(Array($0.utf8)) } }

    @Test func splitsLines() {
        var framer = LineFramer()
        #expect(framer.feed(Array("a\nbc\r\n\n  \r\n\nd".utf8)) == lines("a", "bc"))
        #expect(framer.bufferedByteCount == 1)
        #expect(framer.feed(Array("e\n".utf8)) == lines("de"))
        #expect(framer.feed(Array("tail".utf8)) == [])
        #expect(framer.finish() == lines("tail"))
        #expect(framer.finish() == [])
        #expect(framer.feed(Array("\r".utf8)) == [])
        #expect(framer.finish() == [])
    }

    @Test func keepsInnerCarriageReturnsAndSpaces() {
        var framer = LineFramer()
        #expect(framer.feed(Array(" x\ry \r\r\n".utf8)) == lines(" x\ry \r"))
    }

    @Test func randomChunking() {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<200 {
            var expected: [LineFramer.Output] = []
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 0...30, using: &generator) {
                let kind = Int.random(in: 0..<10, using: &generator)
                if kind == 0 {
                    stream += Array("\n".utf8)
                    continue
                }
                let length = kind == 1 ? Int.random(in: 65...200, using: &generator) : Int.random(in: 1...64, using: &generator)
                let body = (0..<length).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
                stream += body
                stream += Bool.random(using: &generator) ? [0x0D, 0x0A] : [0x0A]
                expected.append(length > 64 ? .tooLong : .line(body))
            }
            let unterminated = Bool.random(using: &generator)
            if unterminated {
                let body = (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
                stream += body
                expected.append(.line(body))
            }
            var framer = LineFramer(maxLineBytes: 64)
            var outputs: [LineFramer.Output] = []
            var index = 0
            while index < stream.count {
                let size = Int.random(in: 1...40, using: &generator)
                let end = min(stream.count, index + size)
                outputs += framer.feed(stream[index..<end])
                #expect(framer.bufferedByteCount <= 65)
                index = end
            }
            outputs += framer.finish()
            #expect(outputs == expected)
        }
    }

    @Test func tooLongIsReportedOnceAndDiscarded() {
        var framer = LineFramer(maxLineBytes: 8)
        #expect(framer.feed(Array("12345678\n".utf8)) == lines("12345678"))
        #expect(framer.feed(Array("1234".utf8)) == [])
        #expect(framer.feed(Array("5678\r".utf8)) == [])
        #expect(framer.feed(Array("\n12345678\r\n".utf8)) == lines("12345678", "12345678"))
        #expect(framer.feed(Array("123456789".utf8)) == [])
        #expect(framer.feed(Array("\n".utf8)) == [.tooLong])
        #expect(framer.feed(Array("123456789\nok\n".utf8)) == [.tooLong, .line(Array("ok".utf8))])
        // Reported as soon as the limit is passed, before the newline arrives.
        #expect(framer.feed(Array("abcde".utf8)) == [])
        #expect(framer.feed(Array("fghij".utf8)) == [.tooLong])
        #expect(framer.bufferedByteCount == 0)
        for _ in 0..<1_000 {
            #expect(framer.feed([UInt8](repeating: 0x41, count: 1_000)) == [])
            #expect(framer.bufferedByteCount == 0)
        }
        #expect(framer.feed(Array("xyz\nnext\n".utf8)) == lines("next"))
        // An over-long last line without a newline is reported once, never delivered.
        #expect(framer.feed(Array("0123456789".utf8)) == [.tooLong])
        #expect(framer.finish() == [])
        #expect(framer.feed(Array("fresh\n".utf8)) == lines("fresh"))
    }

    @Test func zeroCopyCallback() {
        var framer = LineFramer()
        var seen: [String] = []
        Array("{\"a\":1}\n{\"b\":2}\n{\"c\"".utf8).withUnsafeBytes { raw in
            framer.feed(raw) { event in
                if case .line(let bytes) = event { seen.append(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        framer.finish { event in
            if case .line(let bytes) = event { seen.append(String(decoding: bytes, as: UTF8.self)) }
        }
        #expect(seen == [#"{"a":1}"#, #"{"b":2}"#, #"{"c""#])
    }
}
