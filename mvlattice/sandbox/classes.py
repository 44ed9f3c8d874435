"""The allow-lists: which logical operators and which expressions client SQL may use.

Built-in functions are allowed by the class their registry entry names (read from Spark at start,
so the list follows the Spark version), except the functions below. Expressions that Spark's
analyzer adds by itself (attributes, aliases, casts, aggregate wrappers, subqueries, window
frames, …) and the classes that function *builders* produce are listed here by hand; anything
not on a list is refused — a query refused by mistake costs a user a retry, one let through by
mistake can cost the machine.
"""

from __future__ import annotations

LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
EXPRESSIONS = "org.apache.spark.sql.catalyst.expressions."
AGGREGATE = EXPRESSIONS + "aggregate."

# Plain relational operators. Relations (LogicalRelation, View) are checked by name elsewhere;
# Range by its size; hints and repartitioning are not a query's business and are refused.
OPERATORS = frozenset(LOGICAL + name for name in (
    "Project", "Filter", "Aggregate", "Join", "Union", "Intersect", "Except", "Sort",
    "GlobalLimit", "LocalLimit", "Offset", "Tail", "Distinct", "Deduplicate", "SubqueryAlias",
    "LocalRelation", "OneRowRelation", "Window", "Generate", "Expand", "WithCTE",
    "CTERelationDef", "CTERelationRef", "Sample", "LateralJoin", "Range", "View",
    "WindowGroupLimit", "Unpivot",
))  # fmt: skip
RELATION = "org.apache.spark.sql.execution.datasources.LogicalRelation"
VIEW = LOGICAL + "View"
RANGE = LOGICAL + "Range"
JOIN = LOGICAL + "Join"
# Operators that keep their child's row count (for "is this side one row?").
TRANSPARENT = frozenset({"Project", "SubqueryAlias", "Filter", "Sort", "CTERelationDef"})

# Functions that reach outside the query's data: reflection, file names, the OS user, XML and
# protobuf/avro readers (external entities, descriptor files).
DENIED_FUNCTIONS = frozenset({
    "reflect", "java_method", "try_reflect", "input_file_name", "input_file_block_start",
    "input_file_block_length", "current_user", "user", "session_user", "xpath",
    "xpath_boolean", "xpath_double", "xpath_float", "xpath_int", "xpath_long", "xpath_number",
    "xpath_short", "xpath_string", "from_xml", "to_xml", "schema_of_xml", "from_protobuf",
    "to_protobuf", "from_avro", "to_avro", "schema_of_avro",
})  # fmt: skip

# Never allowed, whatever a registry says: user code and reflection.
DENIED_CLASSES = frozenset({
    EXPRESSIONS + "ScalaUDF", EXPRESSIONS + "PythonUDF", EXPRESSIONS + "PythonUDAF",
    EXPRESSIONS + "CallMethodViaReflection", EXPRESSIONS + "TryReflect",
    EXPRESSIONS + "objects.Invoke", EXPRESSIONS + "objects.StaticInvoke",
    EXPRESSIONS + "objects.NewInstance", EXPRESSIONS + "InputFileName",
    EXPRESSIONS + "InputFileBlockStart", EXPRESSIONS + "InputFileBlockLength",
    EXPRESSIONS + "CurrentUser",
})  # fmt: skip

# What the analyzer adds around a query's own expressions.
INTERNAL = frozenset(EXPRESSIONS + name for name in (
    "AttributeReference", "Alias", "Literal", "Cast", "SortOrder", "OuterReference",
    "ScalarSubquery", "Exists", "ListQuery", "InSubquery", "LateralSubquery", "KnownNotNull",
    "KnownFloatingPointNormalized", "PromotePrecision", "CheckOverflow", "CheckOverflowInSum",
    "WindowExpression", "WindowSpecDefinition", "SpecifiedWindowFrame", "UnspecifiedFrame$",
    "RowFrame$", "RangeFrame$", "UnboundedPreceding$", "UnboundedFollowing$", "CurrentRow$",
    "CaseWhen", "In", "InSet", "Not", "And", "Or", "EqualTo", "EqualNullSafe", "LessThan",
    "LessThanOrEqual", "GreaterThan", "GreaterThanOrEqual", "IsNull", "IsNotNull",
    "Coalesce", "If", "GetStructField", "GetArrayItem", "GetMapValue", "ElementAt",
    "GetArrayStructFields", "CreateNamedStruct", "CreateArray", "CreateMap", "Grouping",
    "GroupingID", "SpecialFrameBoundary", "NamedLambdaVariable", "LambdaFunction",
    "UnresolvedNamedLambdaVariable", "Ceil", "Floor", "RoundCeil", "RoundFloor",
    "TimeAdd", "DateAdd", "DateSub", "DateAddInterval", "SubtractTimestamps", "SubtractDates",
    "DatetimeSub", "TimestampAddYMInterval", "DateAddYMInterval", "MultiplyInterval",
    "DivideInterval", "MultiplyYMInterval", "MultiplyDTInterval", "DivideYMInterval",
    "DivideDTInterval", "UnaryMinus", "UnaryPositive", "Add", "Subtract", "Multiply", "Divide",
    "IntegralDivide", "Remainder", "Pmod", "Abs", "ParseToDate", "ParseToTimestamp",
    "GetTimestamp", "ToUnixTimestamp", "Like", "ILike", "LikeAll", "NotLikeAll", "LikeAny",
    "NotLikeAny", "RLike", "Lower", "Upper", "Concat", "Substring", "StringTrim",
    "StringTrimLeft", "StringTrimRight", "StringTrimBoth", "Collate", "TryEval",
    "TryAdd", "TrySubtract", "TryMultiply", "TryDivide", "ExpressionProxy", "Mode",
    "aggregate.Mode", "Stack", "Explode", "PosExplode", "Inline", "JsonTuple",
    "ReplicateRows", "TimeWindow", "SessionWindow", "UnresolvedWindowExpression",
    "Extract", "DatePart", "YearOfWeek", "Years", "Months", "Days", "Hours",
    "MakeTimestamp", "MakeDate", "Uuid", "Rand", "Randn", "Shuffle",
    "ScalarSubquery$", "BoundReference", "EmptyRow", "NullsFirst$", "NullsLast$", "With",
    "CommonExpressionRef", "CommonExpressionDef",
))  # fmt: skip

INTERNAL_AGGREGATES = frozenset(AGGREGATE + name for name in (
    "AggregateExpression", "Complete$", "Count", "Sum", "Average", "Min", "Max", "First",
    "Last", "CountIf", "BoolAnd", "BoolOr", "StddevSamp", "StddevPop", "VarianceSamp",
    "VariancePop", "HyperLogLogPlusPlus", "Percentile", "ApproximatePercentile",
    "PercentileCont", "PercentileDisc", "Median", "Mode", "CollectList", "CollectSet",
    "MaxBy", "MinBy", "AnyValue", "TrySum", "TryAverage", "HllSketchAgg", "HllUnionAgg",
))  # fmt: skip

# Functions that build values whose size a literal argument sets: (class, argument positions).
SIZED = {
    EXPRESSIONS + "StringRepeat": (1,),
    EXPRESSIONS + "StringSpace": (0,),
    EXPRESSIONS + "StringLPad": (1,),
    EXPRESSIONS + "StringRPad": (1,),
    EXPRESSIONS + "BinaryPad": (1,),
    EXPRESSIONS + "ArrayRepeat": (1,),
    EXPRESSIONS + "RandStr": (0,),
}
SEQUENCE = EXPRESSIONS + "Sequence"
