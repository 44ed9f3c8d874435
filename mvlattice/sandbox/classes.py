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
    # Aggregates whose buffer grows with their input (every value, or every distinct value):
    # one group over a large input fills the JVM's heap. Spark offers no bound on them.
    "collect_list", "collect_set", "array_agg", "percentile", "percentile_cont",
    "percentile_disc", "median", "mode", "listagg", "string_agg", "histogram_numeric",
    # sketches whose size an argument sets (a tiny error bound is a huge sketch)
    "count_min_sketch", "bloom_filter_agg", "approx_top_k", "approx_top_k_accumulate",
    "approx_top_k_combine",
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
    "TryAdd", "TrySubtract", "TryMultiply", "TryDivide", "ExpressionProxy",
    "Stack", "Explode", "PosExplode", "Inline", "JsonTuple",
    "ReplicateRows", "TimeWindow", "SessionWindow", "UnresolvedWindowExpression",
    "Extract", "DatePart", "YearOfWeek", "Years", "Months", "Days", "Hours",
    "MakeTimestamp", "MakeDate", "Uuid", "Rand", "Randn", "Shuffle",
    "ScalarSubquery$", "BoundReference", "EmptyRow", "NullsFirst$", "NullsLast$", "With",
    "CommonExpressionRef", "CommonExpressionDef",
))  # fmt: skip

INTERNAL_AGGREGATES = frozenset(AGGREGATE + name for name in (
    "AggregateExpression", "Complete$", "Count", "Sum", "Average", "Min", "Max", "First",
    "Last", "CountIf", "BoolAnd", "BoolOr", "StddevSamp", "StddevPop", "VarianceSamp",
    "VariancePop", "HyperLogLogPlusPlus", "ApproximatePercentile", "MaxBy", "MinBy",
    "AnyValue", "TrySum", "TryAverage", "HllSketchAgg", "HllUnionAgg",
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
    AGGREGATE + "ApproximatePercentile": (2,),  # its accuracy: the sketch's size
}
SEQUENCE = EXPRESSIONS + "Sequence"

# Functions whose argument at a position is a regular expression (java.util.regex), or a text
# built into one (`parse_url`'s key): the pattern must be a literal that `patterns` accepts.
REGEX_ARGUMENTS = {
    EXPRESSIONS + "RLike": (1,),
    EXPRESSIONS + "RegExpReplace": (1,),
    EXPRESSIONS + "RegExpExtract": (1,),
    EXPRESSIONS + "RegExpExtractAll": (1,),
    EXPRESSIONS + "StringSplit": (1,),
    EXPRESSIONS + "StringToMap": (1, 2),
    EXPRESSIONS + "ParseUrl": (2,),
}
LIKE_ARGUMENTS = {EXPRESSIONS + "Like": 1, EXPRESSIONS + "ILike": 1}
# LIKE ALL / LIKE ANY keep their patterns where the plan's JSON does not show them.
MULTI_LIKE = frozenset(EXPRESSIONS + name for name in ("LikeAll", "NotLikeAll", "LikeAny",
                                                       "NotLikeAny"))  # fmt: skip
# Quadratic in its arguments' lengths: each a column or a short literal.
EDIT_DISTANCE = EXPRESSIONS + "Levenshtein"
MAX_EDIT_LITERAL = 1_000
# Functions whose literal arguments Spark parses recursively while it analyzes the query
# (a type string, a JSON sample), named as the parser sees them.
PARSED_TEXT_FUNCTIONS = frozenset(
    {
        "from_json",
        "from_csv",
        "schema_of_json",
        "schema_of_csv",
        "schema_of_variant",
        "parse_json",
        "try_parse_json",
    }
)
# Relations a client may not read through the parser: old versions and change feeds.
TIME_TRAVEL = "org.apache.spark.sql.catalyst.analysis.RelationTimeTravel"
TABLE_FUNCTION = "org.apache.spark.sql.catalyst.analysis.UnresolvedTableValuedFunction"
UNRESOLVED_FUNCTION = "org.apache.spark.sql.catalyst.analysis.UnresolvedFunction"
UNRESOLVED_RELATION = "org.apache.spark.sql.catalyst.analysis.UnresolvedRelation"
CHANGE_FEED_FUNCTIONS = frozenset({"table_changes", "table_changes_by_path"})
# Hidden columns of file sources (`_metadata.file_path` …): where the data lives is not data.
HIDDEN_COLUMNS = ("_metadata",)
ATTRIBUTE = EXPRESSIONS + "AttributeReference"
