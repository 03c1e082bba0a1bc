import type { EmployeeInput } from '../../shared/employee.js'

/** The demo tenant's roll: a small factory near Pune. Emails are at a reserved domain (RFC 2606). */
export const DEMO_EMPLOYEES: readonly EmployeeInput[] = [
  ['E001', 'Asha Patil', 'Assembly'],
  ['E002', 'Ravi Kumar', 'Assembly'],
  ['E003', 'Priya Sharma', 'Quality'],
  ['E004', 'Arjun Nair', 'Maintenance'],
  ['E005', 'Meena Iyer', 'Stores'],
  ['E006', 'Sandeep Singh', 'Packing'],
  ['E007', 'Kavita Deshmukh', 'Quality'],
  ['E008', 'Imran Shaikh', 'Maintenance'],
].map(([employeeCode, name, department]) => ({
  employeeCode: employeeCode as string,
  name: name as string,
  email: `${(name as string).toLowerCase().replace(' ', '.')}@demo-factory.example`,
  department: department as string,
  location: 'Pune plant',
  status: 'ACTIVE' as const,
}))

/** The employees the simulated device punches now and then; the others are left for you to punch. */
export const SIMULATED_EMPLOYEES = ['E001', 'E002', 'E003'] as const
