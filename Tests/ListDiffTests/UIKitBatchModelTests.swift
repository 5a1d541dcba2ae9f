import ListDiff
import Testing
import TestSupport

@Suite("The UIKit batch model")
struct UIKitBatchModelTests {
    let list = [TestItem](ids: [0, 1, 2, 3, 4])
    static func item(_ id: Int) -> TestItem { TestItem(id: id, revision: 9) }

    @Test("applies deletes, inserts and moves as UIKit does")
    func appliesStructural() throws {
        // Remove 1 (delete) and 3 (move); left: 0, 2, 4. Place 3 at 0 and 7 at 2; fill the rest.
        let batch = Batch(deletes: [1], inserts: [IndexedItem(index: 2, item: Self.item(7))], moves: [Move(from: 3, to: 0)])
        #expect(try UIKitBatchModel.apply(batch, to: list).map(\.id) == [3, 0, 7, 2, 4])
    }

    @Test("applies a pure-update batch")
    func appliesUpdates() throws {
        let batch = Batch(updates: [IndexedItem(index: 4, item: Self.item(4))])
        #expect(try UIKitBatchModel.apply(batch, to: list).last == Self.item(4))
    }

    static let invalid: [(Batch<TestItem>, BatchRule)] = [
        (Batch(deletes: [5]), .indexOutOfRange),
        (Batch(deletes: [-1]), .indexOutOfRange),
        (Batch(inserts: [IndexedItem(index: 6, item: item(9))]), .indexOutOfRange),
        (Batch(moves: [Move(from: 0, to: 5)]), .indexOutOfRange),
        (Batch(moves: [Move(from: 7, to: 0)]), .indexOutOfRange),
        (Batch(updates: [IndexedItem(index: 5, item: item(9))]), .indexOutOfRange),
        (Batch(deletes: [3, 3]), .duplicateIndex),
        (Batch(inserts: [IndexedItem(index: 1, item: item(8)), IndexedItem(index: 1, item: item(9))]), .duplicateIndex),
        (Batch(moves: [Move(from: 1, to: 3), Move(from: 1, to: 4)]), .duplicateIndex),
        (Batch(moves: [Move(from: 1, to: 3), Move(from: 2, to: 3)]), .duplicateIndex),
        (Batch(updates: [IndexedItem(index: 1, item: item(1)), IndexedItem(index: 1, item: item(1))]), .duplicateIndex),
        (Batch(deletes: [1, 3]), .deletesNotDescending),
        (Batch(inserts: [IndexedItem(index: 3, item: item(8)), IndexedItem(index: 1, item: item(9))]), .insertsNotAscending),
        (Batch(deletes: [2], updates: [IndexedItem(index: 2, item: item(2))]), .deleteAndUpdate),
        (Batch(deletes: [2], moves: [Move(from: 2, to: 0)]), .deleteAndMove),
        (Batch(moves: [Move(from: 2, to: 0)], updates: [IndexedItem(index: 2, item: item(2))]), .moveAndUpdate),
        (Batch(inserts: [IndexedItem(index: 0, item: item(9))], moves: [Move(from: 2, to: 0)]), .insertAndMoveToSameIndex),
        (Batch(deletes: [4], updates: [IndexedItem(index: 1, item: item(1))]), .updatesInStructuralBatch),
        (Batch(inserts: [IndexedItem(index: 0, item: item(9))], updates: [IndexedItem(index: 1, item: item(1))]), .updatesInStructuralBatch),
    ]

    @Test("rejects each kind of invalid batch, naming the rule", arguments: 0..<invalid.count)
    func rejects(case number: Int) {
        let (batch, rule) = Self.invalid[number]
        #expect {
            _ = try UIKitBatchModel.apply(batch, to: list)
        } throws: { error in
            (error as? BatchRuleViolation)?.rule == rule
        }
    }

    @Test("every rule has a rejection case")
    func everyRuleCovered() {
        #expect(Set(Self.invalid.map(\.1)) == Set(BatchRule.allCases))
    }
}
