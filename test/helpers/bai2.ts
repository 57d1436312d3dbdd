/**
 * An independent BAI2 reader for the tests (BAI Cash Management Balance Reporting, version 2):
 * joins 88 continuations, checks the record order 01 (02 (03 16* 49)+ 98)+ 99, and recounts
 * the amounts and physical records itself, so a test can compare them with the trailers the
 * file claims. Only funds types '', Z, 0, 1 and 2 (no extra fields) are understood.
 */
export interface Bai2Summary {
  typeCode: string;
  amount: number;
  itemCount: number | undefined;
  fundsType: string;
}
export interface Bai2Detail {
  typeCode: string;
  amount: number;
  fundsType: string;
  bankRef: string;
  customerRef: string;
  text: string;
}
export interface Bai2Account {
  accountNumber: string;
  currency: string;
  summaries: Bai2Summary[];
  details: Bai2Detail[];
  trailer: { total: number; records: number };
  counted: { total: number; records: number };
}
export interface Bai2Group {
  receiver: string;
  originator: string;
  status: string;
  asOfDate: string;
  asOfTime: string;
  currency: string;
  accounts: Bai2Account[];
  trailer: { total: number; accounts: number; records: number };
  counted: { total: number; accounts: number; records: number };
}
export interface Bai2File {
  header: { sender: string; receiver: string; date: string; time: string; fileId: string; version: string };
  groups: Bai2Group[];
  trailer: { total: number; groups: number; records: number };
  counted: { total: number; groups: number; records: number };
}

interface Logical {
  code: string;
  fields: string[];
  physical: number;
}

const amount = (value: string, what: string): number => {
  if (value === '') return 0;
  if (!/^[+-]?\d+$/.test(value)) throw new Error(`${what}: "${value}" is not an amount in cents`);
  return Number(value);
};
const SIMPLE_FUNDS = new Set(['', 'Z', '0', '1', '2']);

function logicalRecords(text: string): Logical[] {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const records: { code: string; raw: string; physical: number }[] = [];
  for (const line of lines) {
    if (!/^\d{2},/.test(line)) throw new Error(`not a BAI2 record: ${line.slice(0, 40)}`);
    const code = line.slice(0, 2);
    if (code === '88') {
      const previous = records[records.length - 1];
      if (!previous) throw new Error('88 continuation without a record');
      // A continued record ends its physical line with "/" unless it is 16 text.
      previous.raw = `${previous.code === '16' ? previous.raw : previous.raw.replace(/\/$/, '')},${line.slice(3)}`;
      previous.physical += 1;
    } else {
      records.push({ code, raw: line, physical: 1 });
    }
  }
  return records.map(({ code, raw, physical }) => {
    if (code === '16') {
      // 16,type,amount,funds,bankRef,customerRef,text — text runs to the end of the record.
      const parts = raw.split(',');
      if (parts.length < 7) throw new Error(`short 16 record: ${raw}`);
      const text = parts.slice(6).join(',');
      return { code, fields: [...parts.slice(1, 6), text === '/' ? '' : text], physical };
    }
    if (!raw.endsWith('/')) throw new Error(`record ${code} does not end with "/": ${raw}`);
    return { code, fields: raw.slice(0, -1).split(',').slice(1), physical };
  });
}

export function parseBai2(text: string): Bai2File {
  const records = logicalRecords(text);
  let i = 0;
  const next = (expected: string[]): Logical => {
    const record = records[i];
    if (!record || !expected.includes(record.code))
      throw new Error(`record ${i + 1}: expected ${expected.join('|')}, found ${record?.code ?? 'end of file'}`);
    i += 1;
    return record;
  };
  const h = next(['01']).fields;
  const file: Bai2File = {
    header: { sender: h[0]!, receiver: h[1]!, date: h[2]!, time: h[3]!, fileId: h[4]!, version: h[7]! },
    groups: [],
    trailer: { total: 0, groups: 0, records: 0 },
    counted: { total: 0, groups: 0, records: 1 },
  };
  while (records[i]?.code === '02') {
    const g = next(['02']);
    const group: Bai2Group = {
      receiver: g.fields[0]!,
      originator: g.fields[1]!,
      status: g.fields[2]!,
      asOfDate: g.fields[3]!,
      asOfTime: g.fields[4]!,
      currency: g.fields[5]!,
      accounts: [],
      trailer: { total: 0, accounts: 0, records: 0 },
      counted: { total: 0, accounts: 0, records: g.physical },
    };
    while (records[i]?.code === '03') {
      const a = next(['03']);
      const [accountNumber, currency, ...rest] = a.fields;
      if (rest.length % 4 !== 0) throw new Error(`03 summaries are not groups of type, amount, count, funds: ${a.fields.join(',')}`);
      const account: Bai2Account = {
        accountNumber: accountNumber!,
        currency: currency!,
        summaries: [],
        details: [],
        trailer: { total: 0, records: 0 },
        counted: { total: 0, records: a.physical },
      };
      for (let s = 0; s < rest.length; s += 4) {
        const [typeCode, value, count, fundsType] = rest.slice(s, s + 4) as [string, string, string, string];
        if (!SIMPLE_FUNDS.has(fundsType)) throw new Error(`funds type ${fundsType} not understood`);
        account.summaries.push({
          typeCode,
          amount: amount(value, `03 ${typeCode}`),
          itemCount: count === '' ? undefined : Number(count),
          fundsType,
        });
        account.counted.total += amount(value, `03 ${typeCode}`);
      }
      while (records[i]?.code === '16') {
        const d = next(['16']);
        const [typeCode, value, fundsType, bankRef, customerRef, detailText] = d.fields as [string, string, string, string, string, string];
        if (!SIMPLE_FUNDS.has(fundsType)) throw new Error(`funds type ${fundsType} not understood`);
        account.details.push({ typeCode, amount: amount(value, '16'), fundsType, bankRef, customerRef, text: detailText });
        account.counted.total += amount(value, '16');
        account.counted.records += d.physical;
      }
      const t = next(['49']);
      account.trailer = { total: amount(t.fields[0]!, '49 total'), records: Number(t.fields[1]) };
      account.counted.records += t.physical;
      group.accounts.push(account);
      group.counted.total += account.trailer.total;
      group.counted.accounts += 1;
      group.counted.records += account.counted.records;
    }
    const gt = next(['98']);
    group.trailer = { total: amount(gt.fields[0]!, '98 total'), accounts: Number(gt.fields[1]), records: Number(gt.fields[2]) };
    group.counted.records += gt.physical;
    file.groups.push(group);
    file.counted.total += group.trailer.total;
    file.counted.groups += 1;
    file.counted.records += group.counted.records;
  }
  const ft = next(['99']);
  file.trailer = { total: amount(ft.fields[0]!, '99 total'), groups: Number(ft.fields[1]), records: Number(ft.fields[2]) };
  file.counted.records += ft.physical;
  if (i !== records.length) throw new Error(`records after the 99 file trailer`);
  return file;
}
