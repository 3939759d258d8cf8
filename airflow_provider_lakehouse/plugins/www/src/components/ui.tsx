import { Badge, Box, Flex, Heading, Link, Spinner, Table, Text } from "@chakra-ui/react";
import type { ReactNode } from "react";

import type { ApiError, Loaded } from "../api";
import { cellText } from "../format";
import type { Cell } from "../types";

export const Section = ({ title, children, right }: { title: string; children: ReactNode; right?: ReactNode }) => (
  <Box as="section" borderWidth="1px" borderColor="border" borderRadius="md" mb={4} p={4} bg="bg.panel">
    <Flex align="center" justify="space-between" mb={3} gap={3} wrap="wrap">
      <Heading size="md">{title}</Heading>
      {right}
    </Flex>
    {children}
  </Box>
);

export const ErrorBox = ({ error }: { error: Error }) => {
  const status = (error as ApiError).status;
  const text =
    status === 401
      ? "You are not logged in."
      : status === 403
        ? `Not allowed: ${error.message}`
        : error.message;
  return (
    <Box role="alert" borderWidth="1px" borderColor="red.500" color="fg.error" borderRadius="md" p={3} my={2}>
      {text}
    </Box>
  );
};

/** Loading, error or the content, for one API call. */
export const Loading = <T,>({ state, children }: { state: Loaded<T>; children: (data: T) => ReactNode }) => {
  if (state.error) return <ErrorBox error={state.error} />;
  if (state.data === undefined)
    return (
      <Flex align="center" gap={2} color="fg.muted" py={4}>
        <Spinner size="sm" /> Loading…
      </Flex>
    );
  return <>{children(state.data)}</>;
};

export const Stat = ({ label, value }: { label: string; value: ReactNode }) => (
  <Box minW="120px">
    <Text fontSize="xs" color="fg.muted" textTransform="uppercase" letterSpacing="wide">
      {label}
    </Text>
    <Text fontSize="lg" fontWeight="semibold" data-testid={`stat-${label}`}>
      {value}
    </Text>
  </Box>
);

export const ColumnBadges = ({ columns, palette, label }: { columns: string[]; palette: string; label: string }) =>
  columns.length === 0 ? null : (
    <Flex gap={1} wrap="wrap" aria-label={label}>
      {columns.map((c) => (
        <Badge key={c} colorPalette={palette} variant="subtle" fontFamily="mono" fontSize="xs" data-badge={label}>
          {c}
        </Badge>
      ))}
    </Flex>
  );

/** Rows of a preview or a change list, as a compact table (NULL shown as NULL, like DuckDB). */
export const RowsTable = ({ columns, rows, testId }: { columns: string[]; rows: Cell[][]; testId: string }) => (
  <Box overflowX="auto" maxH="520px" overflowY="auto" borderWidth="1px" borderColor="border" borderRadius="sm">
    <Table.Root size="sm" variant="line" data-testid={testId} stickyHeader>
      <Table.Header>
        <Table.Row>
          {columns.map((c) => (
            <Table.ColumnHeader key={c} fontFamily="mono">
              {c}
            </Table.ColumnHeader>
          ))}
        </Table.Row>
      </Table.Header>
      <Table.Body>
        {rows.map((row, i) => (
          <Table.Row key={i}>
            {row.map((value, j) => (
              <Table.Cell key={j} fontFamily="mono" fontSize="xs" color={value === null ? "fg.muted" : undefined} whiteSpace="nowrap">
                {cellText(value)}
              </Table.Cell>
            ))}
          </Table.Row>
        ))}
      </Table.Body>
    </Table.Root>
  </Box>
);

export const InternalLink = ({ onClick, children, testId }: { onClick: () => void; children: ReactNode; testId?: string }) => (
  <Link
    colorPalette="blue"
    color="fg.info"
    cursor="pointer"
    data-testid={testId}
    onClick={(event) => {
      event.preventDefault();
      onClick();
    }}
  >
    {children}
  </Link>
);

/** A table's header row from its column titles. */
export const HeaderRow = ({ names }: { names: string[] }) => (
  <Table.Header>
    <Table.Row>
      {names.map((h, i) => (
        <Table.ColumnHeader key={`${h}${i}`}>{h}</Table.ColumnHeader>
      ))}
    </Table.Row>
  </Table.Header>
);
